//! Asking for a real device where there is no CUDA driver is a clear error, never a silent
//! fallback to the emulated device (feature `cuda`; on a machine with a driver this checks the
//! device opens instead).
#![cfg(feature = "cuda")]

use distlops_core::{Communicator, Cuda, Error};

#[test]
fn a_real_device_or_a_clear_error() {
    match Cuda::device(0) {
        Ok(cuda) => {
            assert!(!cuda.is_emulated());
            println!("opened {}", cuda.describe());
        }
        Err(Error::Device(msg)) => {
            assert!(
                msg.contains("CUDA driver") || msg.contains("device"),
                "{msg}"
            );
            if std::env::var("DISTLOPS_DEVICE").as_deref() != Ok("emulated") {
                let e = Cuda::for_rank(&Communicator::serial()).expect_err("no device here");
                assert!(matches!(e, Error::Device(_)), "{e}");
            }
            println!("no device: {msg}");
        }
        Err(e) => panic!("unexpected error kind: {e}"),
    }
}
