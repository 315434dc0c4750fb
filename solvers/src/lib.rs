//! distlops-solvers: Krylov solvers (CG, CGLS, ...) written once over the
//! [`Vector`](distlops_core::Vector) trait, so they run on plain and stacked distributed vectors
//! alike. The solvers arrive with the linear-operator work; this crate is their home in the
//! workspace layout.

pub use distlops_core as core;
