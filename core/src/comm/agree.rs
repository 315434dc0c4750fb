//! Agreement before communication: how a mistake that only some ranks see becomes an error on
//! every rank instead of a hang or a wrong answer.
//!
//! Every communicating operation of distlops begins with [`Communicator::agree_on`]: one small
//! all-reduce that carries each rank's verdict on its own inputs and a fingerprint of what the
//! operation is about to exchange (layouts, spaces, roots). If any rank's inputs are wrong, or
//! the ranks disagree on the fingerprint, every rank returns an error before a single value
//! moves, so nothing waits for a message that will not come and nothing reads a message that
//! was meant for another layout.

use super::{Communicator, ReduceOp};
use crate::error::{Error, Result};

/// A 64-bit fingerprint of metadata (or data) that ranks must agree on: a multiply-rotate hash
/// over 64-bit words (FxHash's step). Equal inputs give equal fingerprints on every rank and in
/// every process of a job; different inputs collide with a chance of about 2^-64 for
/// unstructured changes (this is a check against mistakes, not against an adversary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(u64);

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint(0xcbf2_9ce4_8422_2325)
    }
}

impl Fingerprint {
    /// Mixes in one word. No communication (nor does any method of `Fingerprint`).
    #[must_use]
    pub fn word(self, w: u64) -> Self {
        Fingerprint((self.0.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95))
    }

    /// Mixes in a length and then every value.
    #[must_use]
    pub fn words(self, ws: &[usize]) -> Self {
        ws.iter()
            .fold(self.word(ws.len() as u64), |h, &w| h.word(w as u64))
    }

    /// Mixes in a string (its length and bytes).
    #[must_use]
    pub fn text(self, s: &str) -> Self {
        s.bytes()
            .fold(self.word(s.len() as u64), |h, b| h.word(u64::from(b)))
    }

    /// The fingerprint's value.
    pub fn value(self) -> u64 {
        self.0
    }
}

impl Communicator {
    /// Agrees on a locally decided outcome: if any rank has `Err`, every rank returns an error (its
    /// own, or [`Error::FailedOnOtherRank`] naming the lowest failing rank with its whole message).
    /// [Collective](crate#collective-calls): every rank of this communicator calls it, also a rank
    /// whose own outcome is `Err`.
    ///
    /// This is how checks that depend on rank-local data (a local array's shape, say) still fail on
    /// every rank instead of leaving the others waiting. One small all-reduce (none on one rank),
    /// and a broadcast of the message when some rank failed.
    ///
    /// # Errors
    /// This rank's error, or [`Error::FailedOnOtherRank`].
    pub fn agree(&self, local: Result<()>) -> Result<()> {
        self.agree_value(local)
    }

    /// [`agree`](Self::agree) for an outcome that carries a value: this rank's value if every rank
    /// succeeded, an error on every rank otherwise (this rank's value is then dropped).
    /// [Collective](crate#collective-calls): every rank of this communicator calls it, as
    /// [`agree`](Self::agree).
    ///
    /// # Errors
    /// This rank's error, or [`Error::FailedOnOtherRank`].
    pub fn agree_value<V>(&self, local: Result<V>) -> Result<V> {
        if self.size() == 1 {
            return local;
        }
        let mut words = [failure_key(self.rank(), local.is_err())];
        self.all_reduce_in_place(&mut words, ReduceOp::Max);
        self.settle(words[0], local)
    }

    /// The check every communicating operation begins with: agrees on this rank's verdict on its
    /// inputs (`local`) and on a fingerprint of what the operation will exchange (layouts, spaces,
    /// roots, lengths), before anything else moves. [Collective](crate#collective-calls): every
    /// rank of this communicator calls it, with the same `what`.
    ///
    /// * Some rank has `Err`: every rank returns an error (as [`agree`](Self::agree)).
    /// * The ranks' fingerprints differ: every rank returns [`Error::LayoutMismatch`] naming
    ///   `what` and, for each distinct value, `describe()` with the ranks that gave it.
    ///
    /// One all-reduce of three words (none on one rank); the descriptions travel only when the
    /// fingerprints differ.
    ///
    /// # Errors
    /// As above.
    pub fn agree_on(
        &self,
        what: &str,
        fingerprint: Fingerprint,
        describe: impl FnOnce() -> String,
        local: Result<()>,
    ) -> Result<()> {
        if self.size() == 1 {
            return local;
        }
        let fp = fingerprint.value();
        let mut words = [failure_key(self.rank(), local.is_err()), fp, !fp];
        self.all_reduce_in_place(&mut words, ReduceOp::Max);
        self.settle(words[0], local)?;
        if words[1] == !words[2] {
            return Ok(());
        }
        // Slow path: the ranks disagree; tell the user on what.
        let mine = describe();
        let texts = self.all_gather_text(&mine);
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for (r, t) in texts.into_iter().enumerate() {
            match groups.iter_mut().find(|(g, _)| *g == t) {
                Some((_, ranks)) => ranks.push(r),
                None => groups.push((t, vec![r])),
            }
        }
        let list: Vec<String> = groups
            .iter()
            .map(|(t, ranks)| format!("rank(s) {ranks:?}: {t}"))
            .collect();
        Err(Error::LayoutMismatch(format!(
            "{what}: the ranks disagree on their inputs ({})",
            list.join("; ")
        )))
    }

    /// Turns the reduced failure key into this rank's outcome: `local` if nobody failed, else an
    /// error on every rank carrying the first failing rank's whole message.
    fn settle<V>(&self, key: u64, local: Result<V>) -> Result<V> {
        if key == 0 {
            return local;
        }
        let first = (u64::MAX - key) as usize;
        let mut text = match &local {
            Err(e) if self.rank() == first => e.to_string(),
            _ => String::new(),
        };
        self.broadcast_text(&mut text, first);
        match local {
            Err(e) => Err(e),
            Ok(_) => Err(Error::FailedOnOtherRank {
                rank: first,
                message: text,
            }),
        }
    }

    /// Broadcasts a string of any length from `root`.
    fn broadcast_text(&self, text: &mut String, root: usize) {
        let mut len = [text.len() as u64];
        self.broadcast_into(&mut len, root);
        let mut bytes = std::mem::take(text).into_bytes();
        bytes.resize(len[0] as usize, 0);
        self.broadcast_into(&mut bytes, root);
        *text = String::from_utf8_lossy(&bytes).into_owned();
    }

    /// Every rank's string, in rank order.
    fn all_gather_text(&self, mine: &str) -> Vec<String> {
        let mut lens = vec![0usize; self.size()];
        self.all_gather_into(&[mine.len()], &mut lens);
        let mut all = vec![0u8; lens.iter().sum()];
        self.all_gather_varcount_into(mine.as_bytes(), &mut all, &lens);
        let mut rest = &all[..];
        lens.iter()
            .map(|&n| {
                let (head, tail) = rest.split_at(n);
                rest = tail;
                String::from_utf8_lossy(head).into_owned()
            })
            .collect()
    }
}

/// The word a rank contributes to the failure maximum: 0 if it succeeded, `u64::MAX - rank`
/// otherwise, so the maximum names the lowest failing rank.
fn failure_key(rank: usize, failed: bool) -> u64 {
    if failed {
        u64::MAX - rank as u64
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Threads;

    #[test]
    fn long_messages_arrive_whole_and_disagreement_names_every_rank() {
        let long = "x".repeat(1000) + "end";
        let out = Threads::run(3, |comm| {
            let local = if comm.rank() == 2 {
                Err(Error::InvalidArgument(long.clone()))
            } else {
                Ok(())
            };
            let failed = comm.agree(local).unwrap_err();
            let fp = Fingerprint::default().word(comm.rank().min(1) as u64);
            let differ = comm
                .agree_on(
                    "test",
                    fp,
                    || format!("view {}", comm.rank().min(1)),
                    Ok(()),
                )
                .unwrap_err();
            let same = comm.agree_on("test", Fingerprint::default(), String::new, Ok(()));
            (failed, differ, same)
        });
        for (rank, (failed, differ, same)) in out.into_iter().enumerate() {
            assert!(failed.to_string().ends_with("end"), "rank {rank}: {failed}");
            if rank != 2 {
                assert!(matches!(failed, Error::FailedOnOtherRank { rank: 2, .. }));
            }
            let msg = differ.to_string();
            assert!(
                msg.contains("rank(s) [0]: view 0") && msg.contains("rank(s) [1, 2]: view 1"),
                "{msg}"
            );
            assert!(same.is_ok());
        }
    }
}
