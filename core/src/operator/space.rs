//! [`Space`]: the structure of the vectors an operator takes and returns.

use crate::array::{array_fingerprint, typed_fingerprint, DistributedArray, Mask};
use crate::comm::{Communicator, Fingerprint};
use crate::engine::{Engine, Host};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::partition::Partition;
use crate::scalar::Scalar;
use crate::stacked::{DistVector, StackedDistributedArray, STACK};
use crate::vector_ref::VectorRef;

/// The domain or range of a [`LinearOperator`](super::LinearOperator): a plain distributed array
/// with a given layout (and colour groups), or a stack of such spaces.
///
/// Fixed when the operator is built, identical on every rank, so checking a vector against it
/// needs no communication. Only [`Space::masked`] communicates (it splits the communicator);
/// every other constructor and method, [`zeros`](Space::zeros) included, does no
/// communication.
#[derive(Clone, Debug)]
pub enum Space {
    /// Plain arrays with this layout and mask.
    Array {
        /// The layout.
        layout: Layout,
        /// The colour groups, if any.
        mask: Option<Mask>,
    },
    /// Stacked arrays with these parts.
    Stacked(Vec<Space>),
}

impl PartialEq for Space {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (
                Space::Array {
                    layout: a,
                    mask: ma,
                },
                Space::Array {
                    layout: b,
                    mask: mb,
                },
            ) => a == b && ma == mb,
            (Space::Stacked(a), Space::Stacked(b)) => a == b,
            _ => false,
        }
    }
}

impl Space {
    /// Plain arrays with `layout` and no mask.
    pub fn array(layout: Layout) -> Space {
        Space::Array { layout, mask: None }
    }

    /// A 1-D Scatter space of `n` elements split with the balanced rule.
    ///
    /// # Errors
    /// As [`Layout::scatter`].
    pub fn scatter_1d(n: usize, nranks: usize) -> Result<Space> {
        Ok(Space::array(Layout::scatter(&[n], 0, nranks)?))
    }

    /// A 1-D Broadcast space of `n` elements.
    ///
    /// # Errors
    /// As [`Layout::broadcast`].
    pub fn broadcast_1d(n: usize, nranks: usize) -> Result<Space> {
        Ok(Space::array(Layout::broadcast(&[n], nranks)?))
    }

    /// A fingerprint of the space (its layouts, masks and structure), whatever the element type
    /// and engine of its vectors: how ranks check with one small all-reduce that they built the
    /// same operator.
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint_with(&|layout, mask| array_fingerprint(layout, mask))
    }

    /// The fingerprint of the vectors of `T` on engine `E` in this space: equal to the
    /// [`fingerprint`](DistVector::fingerprint) of every such vector. The checked products and
    /// the solvers agree on it, so an operator of `f32` on one rank and of `f64` on another is
    /// an error on every rank.
    pub fn typed_fingerprint<T: Scalar, E: Engine>(&self) -> Fingerprint {
        self.fingerprint_with(&|layout, mask| typed_fingerprint::<T, E>(layout, mask))
    }

    /// The fingerprint of the structure, with `leaf` the fingerprint of a plain part.
    fn fingerprint_with(
        &self,
        leaf: &dyn Fn(&Layout, Option<&Mask>) -> Fingerprint,
    ) -> Fingerprint {
        match self {
            Space::Array { layout, mask } => leaf(layout, mask.as_ref()),
            Space::Stacked(parts) => parts.iter().fold(
                Fingerprint::default().word(STACK).word(parts.len() as u64),
                |h, p| h.word(p.fingerprint_with(leaf).value()),
            ),
        }
    }

    /// The space `v` belongs to.
    pub fn of<'a, T: Scalar, E: Engine>(v: impl Into<VectorRef<'a, T, E>>) -> Space {
        match v.into() {
            VectorRef::Array(a) => Space::Array {
                layout: a.layout().clone(),
                mask: a.mask().cloned(),
            },
            VectorRef::Stacked(s) => Space::Stacked(s.parts().iter().map(Space::of).collect()),
        }
    }

    /// Whether `v` belongs to this space (no allocation, no communication).
    pub fn matches<'a, T: Scalar, E: Engine>(&self, v: impl Into<VectorRef<'a, T, E>>) -> bool {
        match (self, v.into()) {
            (Space::Array { layout, mask }, VectorRef::Array(a)) => {
                a.layout() == layout && a.mask() == mask.as_ref()
            }
            (Space::Stacked(parts), VectorRef::Stacked(s)) => {
                parts.len() == s.len() && parts.iter().zip(s.parts()).all(|(p, v)| p.matches(v))
            }
            _ => false,
        }
    }

    /// Checks that `v` belongs to this space. No communication: the verdict is this rank's alone
    /// (agree on it with [`Communicator::agree`] before communicating).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] naming `what`, identically on every rank.
    pub fn check<'a, T: Scalar, E: Engine>(
        &self,
        v: impl Into<VectorRef<'a, T, E>>,
        what: &str,
    ) -> Result<()> {
        let v = v.into();
        if self.matches(v) {
            return Ok(());
        }
        let got = Space::of(v);
        // The same global array in another layout (e.g. PyLops-MPI's replicated Broadcast form):
        // say how to move it.
        let movable = match (self, &got) {
            (
                Space::Array { layout, mask },
                Space::Array {
                    layout: other,
                    mask: other_mask,
                },
            ) => layout.global_shape() == other.global_shape() && mask == other_mask,
            _ => false,
        };
        let hint = if movable {
            "; it has the right global shape, so `v.redistribute_to(op.domain().layout()?)` (for \
             an operator's input) or `op.range().layout()?` (for its data or output) moves it \
             there"
        } else {
            ""
        };
        Err(Error::LayoutMismatch(format!(
            "{what}: expected {}, got {}{hint}",
            self.describe(),
            got.describe()
        )))
    }

    /// A zero vector of this space in main memory. No communication.
    ///
    /// # Errors
    /// [`Error::CommSizeMismatch`] if the layouts were made for another number of ranks;
    /// [`Error::Allocation`] on a rank whose block cannot be allocated.
    pub fn zeros<T: Scalar>(&self, comm: &Communicator) -> Result<DistVector<T>> {
        self.zeros_on(&Host, comm)
    }

    /// A zero vector of this space on `engine`. No communication.
    ///
    /// # Errors
    /// As [`zeros`](Self::zeros).
    pub fn zeros_on<T: Scalar, E: Engine>(
        &self,
        engine: &E,
        comm: &Communicator,
    ) -> Result<DistVector<T, E>> {
        self.vector_on(engine, comm, false)
    }

    /// A vector of this space on `engine` whose values are unspecified (NaN with debug
    /// assertions on the host), for an output that is overwritten whole, such as a product's
    /// (see [`Memory::for_overwrite`](crate::engine::Memory::for_overwrite)). No communication.
    ///
    /// # Errors
    /// As [`zeros`](Self::zeros).
    pub(crate) fn for_overwrite_on<T: Scalar, E: Engine>(
        &self,
        engine: &E,
        comm: &Communicator,
    ) -> Result<DistVector<T, E>> {
        self.vector_on(engine, comm, true)
    }

    /// A vector of this space: zeros, or unspecified values when `overwrite`.
    fn vector_on<T: Scalar, E: Engine>(
        &self,
        engine: &E,
        comm: &Communicator,
        overwrite: bool,
    ) -> Result<DistVector<T, E>> {
        Ok(match self {
            Space::Array { layout, mask } => {
                let a = if overwrite {
                    DistributedArray::for_overwrite_on(engine, comm, layout)?
                } else {
                    DistributedArray::zeros_on(engine, comm, layout)?
                };
                DistVector::Array(match mask {
                    Some(m) => a.with_existing_mask(m.clone()),
                    None => a,
                })
            }
            Space::Stacked(parts) => DistVector::Stacked(StackedDistributedArray::new(
                parts
                    .iter()
                    .map(|p| p.vector_on(engine, comm, overwrite))
                    .collect::<Result<_>>()?,
            )?),
        })
    }

    /// The total number of elements.
    pub fn global_len(&self) -> usize {
        match self {
            Space::Array { layout, .. } => layout.global_len(),
            Space::Stacked(parts) => parts.iter().map(Space::global_len).sum(),
        }
    }

    /// The number of elements of a vector of this space ([`global_len`](Self::global_len)); for
    /// a Broadcast space, of one copy. No communication.
    pub fn len(&self) -> usize {
        self.global_len()
    }

    /// `true` if vectors of this space hold no elements.
    pub fn is_empty(&self) -> bool {
        self.global_len() == 0
    }

    /// The global shape of a vector of this space: the layout's global shape for a plain space,
    /// `[len]` for a stack (whose parts have their own shapes: [`parts`](Self::parts)). No
    /// communication.
    pub fn shape(&self) -> Vec<usize> {
        match self {
            Space::Array { layout, .. } => layout.global_shape().to_vec(),
            Space::Stacked(_) => vec![self.global_len()],
        }
    }

    /// The spaces of a stack's parts (empty for a plain space).
    pub fn parts(&self) -> &[Space] {
        match self {
            Space::Array { .. } => &[],
            Space::Stacked(parts) => parts,
        }
    }

    /// The layout of a plain space: what a vector must have to be in it, e.g.
    /// `x.redistribute_to(op.domain().layout()?)` moves a replicated (PyLops-MPI-style Broadcast)
    /// or differently split `x` of the same global shape into the domain of `op`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a stack, whose parts have a layout each
    /// ([`parts`](Self::parts)).
    pub fn layout(&self) -> Result<&Layout> {
        match self {
            Space::Array { layout, .. } => Ok(layout),
            Space::Stacked(parts) => Err(Error::InvalidArgument(format!(
                "a stack of {} spaces has no single layout; each of its parts has one",
                parts.len()
            ))),
        }
    }

    /// `true` for a plain space whose arrays are replicated on every rank.
    pub fn is_replicated(&self) -> bool {
        matches!(self, Space::Array { layout, .. } if layout.partition() != Partition::Scatter)
    }

    /// A short human-readable description.
    pub fn describe(&self) -> String {
        match self {
            Space::Array { layout, mask } => format!(
                "{} {:?} (axis {}, counts {:?}{})",
                layout.partition(),
                layout.global_shape(),
                layout.axis(),
                layout.counts(),
                if mask.is_some() { ", masked" } else { "" }
            ),
            Space::Stacked(parts) => format!(
                "stack of [{}]",
                parts
                    .iter()
                    .map(Space::describe)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

impl Space {
    /// Plain arrays with `layout`, reduced inside colour groups (see
    /// [`DistributedArray::with_mask`]). [Collective](crate#collective-calls): every rank of
    /// `comm` calls it, with the same colours (it agrees on the list and splits the
    /// communicator).
    ///
    /// # Errors
    /// [`Error::InvalidMask`] on every rank for a malformed colour list.
    pub fn masked(layout: Layout, comm: &Communicator, colours: &[usize]) -> Result<Space> {
        Ok(Space::Array {
            layout,
            mask: Some(crate::array::make_mask(comm, colours)?),
        })
    }
}
