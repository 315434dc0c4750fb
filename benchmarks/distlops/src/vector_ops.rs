//! W6 `vector_ops`: dot, 2-norm, `x + y` and `2 x` of distributed vectors of `2e7` doubles, each
//! op returning a new value as in PyLops-MPI.

use crate::inputs::scatter_array;
use crate::measure::{checks, time_op, Record};
use crate::Res;
use distlops::core::{Communicator, DistributedArray, Layout, Result};

/// The global length.
const N: usize = 20_000_000;

/// W6: `x = random(N)`, `y = random(N)` (the next `N` draws).
pub fn w6(comm: &Communicator, reps: usize) -> Res<Vec<Record>> {
    let layout = Layout::scatter(&[N], 0, comm.size())?;
    let (x, next) = scatter_array::<f64>(comm, &layout, 0, |u| u)?;
    let (y, _) = scatter_array::<f64>(comm, &layout, next, |u| u)?;
    let base = Record {
        workload: "W6",
        name: "vector_ops",
        dtype: "float64",
        global_size: N,
        shape: [N, N],
        ..Record::default()
    };
    let mb = |arrays: usize| Some((arrays * N * 8) as f64);
    let scalar = |op, bytes, f: &dyn Fn() -> Result<f64>| -> Res<Record> {
        let (times, value) = time_op(comm, reps, f)?;
        Ok(Record {
            op,
            times,
            check: value,
            bytes,
            ..base.clone()
        })
    };
    let array = |op, bytes, f: &dyn Fn() -> Result<DistributedArray<f64>>| -> Res<Record> {
        let (times, z) = time_op(comm, reps, f)?;
        let (check, check_w) = checks(&z);
        Ok(Record {
            op,
            times,
            check,
            check_w: Some(check_w),
            bytes,
            ..base.clone()
        })
    };
    Ok(vec![
        scalar("dot", mb(2), &|| x.dot(&y))?,
        scalar("norm", mb(1), &|| Ok(x.norm2()))?,
        array("add", mb(3), &|| &x + &y)?,
        array("scale", mb(2), &|| Ok(&x * 2.0))?,
    ])
}
