//! [`LsqrStop`]: why [`Lsqr`](crate::Lsqr) stopped, SciPy's `istop` codes.

use crate::StopReason;

/// Why LSQR stopped: SciPy's `istop` codes 0 to 7, with their meanings. The estimates compared
/// are those of the [type docs](crate::Lsqr); `Abar = [A; damp I]`, `rbar = [y - A x; -damp x]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LsqrStop {
    /// 0: `A^H y = 0` (or `y = 0`): the exact solution is `x = 0` (`x = x0` with an initial
    /// guess). Decided at setup, no step taken.
    ZeroSolution,
    /// 1: `|rbar| <= btol |y| + atol |Abar| |x|`: `A x = y` is solved well enough (a compatible
    /// system).
    Compatible,
    /// 2: `|Abar^H rbar| <= atol |Abar| |rbar|`: the least-squares solution is good enough.
    LeastSquares,
    /// 3: the estimate of `cond(Abar)` reached `conlim`.
    ConditionLimit,
    /// 4: test 1 holds with `atol = btol = eps` (machine precision).
    CompatibleMachine,
    /// 5: test 2 holds with `atol = eps`.
    LeastSquaresMachine,
    /// 6: `cond(Abar) >= 1 / eps`.
    ConditionLimitMachine,
    /// 7: `niter` steps were taken.
    IterationLimit,
}

impl LsqrStop {
    /// SciPy's `istop` code, 0 to 7.
    pub fn code(self) -> u8 {
        match self {
            LsqrStop::ZeroSolution => 0,
            LsqrStop::Compatible => 1,
            LsqrStop::LeastSquares => 2,
            LsqrStop::ConditionLimit => 3,
            LsqrStop::CompatibleMachine => 4,
            LsqrStop::LeastSquaresMachine => 5,
            LsqrStop::ConditionLimitMachine => 6,
            LsqrStop::IterationLimit => 7,
        }
    }

    /// SciPy's message for the code.
    pub fn message(self) -> &'static str {
        match self {
            LsqrStop::ZeroSolution => "The exact solution is  x = 0",
            LsqrStop::Compatible => "Ax - b is small enough, given atol, btol",
            LsqrStop::LeastSquares => "The least-squares solution is good enough, given atol",
            LsqrStop::ConditionLimit => "The estimate of cond(Abar) has exceeded conlim",
            LsqrStop::CompatibleMachine => "Ax - b is small enough for this machine",
            LsqrStop::LeastSquaresMachine => {
                "The least-squares solution is good enough for this machine"
            }
            LsqrStop::ConditionLimitMachine => "Cond(Abar) seems to be too large for this machine",
            LsqrStop::IterationLimit => "The iteration limit has been reached",
        }
    }

    /// The solver-independent reason: [`StopReason::MaxIterations`] for `IterationLimit`,
    /// [`StopReason::ConditionLimit`] for `ConditionLimit` and `ConditionLimitMachine`,
    /// [`StopReason::ToleranceReached`] for the others (0, 1, 2, 4, 5).
    pub fn stop_reason(self) -> StopReason {
        match self {
            LsqrStop::IterationLimit => StopReason::MaxIterations,
            LsqrStop::ConditionLimit | LsqrStop::ConditionLimitMachine => {
                StopReason::ConditionLimit
            }
            _ => StopReason::ToleranceReached,
        }
    }
}

impl std::fmt::Display for LsqrStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "istop = {}: {}", self.code(), self.message())
    }
}
