//! distlops-operators: distributed linear operators (one per file), built on
//! [`distlops_core`]. The operator trait, its algebra and the first operators (BlockDiag, VStack,
//! HStack, local building blocks) arrive with the linear-operator work; this crate is their home
//! in the workspace layout.

pub use distlops_core as core;
