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
    #[inline]
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
        let mut describe = Some(describe);
        let mut text = || describe.take().map_or_else(String::new, |d| d());
        self.agree_all(local, &mut [Claim::layouts(what, fingerprint, &mut text)])
    }

    /// [`agree_on`](Self::agree_on) for several claims at once: this rank's verdict `local` and
    /// every claim's fingerprint travel in **one** all-reduce (of `1 + 2 n` words for `n`
    /// claims; none on one rank). [Collective](crate#collective-calls): every rank of this
    /// communicator calls it, with claims of the same kinds in the same order.
    ///
    /// A solver's set-up uses it to agree on its vectors, its operator's spaces and its
    /// parameters with one reduction ([`Claim::layouts`], [`Claim::parameters`]).
    ///
    /// # Errors
    /// This rank's error or [`Error::FailedOnOtherRank`] if some rank's `local` is `Err`; else,
    /// if the ranks' fingerprints of a claim differ, that claim's error (the first such claim)
    /// on every rank: [`Error::LayoutMismatch`] for [`Claim::layouts`],
    /// [`Error::InvalidArgument`] naming the parameters that differ for [`Claim::parameters`].
    pub fn agree_all(&self, local: Result<()>, claims: &mut [Claim<'_>]) -> Result<()> {
        if self.size() == 1 {
            return local;
        }
        let mut words = Vec::with_capacity(1 + 2 * claims.len());
        words.push(failure_key(self.rank(), local.is_err()));
        for c in claims.iter() {
            let fp = c.fingerprint.value();
            words.extend([fp, !fp]);
        }
        self.all_reduce_in_place(&mut words, ReduceOp::Max);
        self.settle(words[0], local)?;
        let differs = (0..claims.len()).find(|&i| words[1 + 2 * i] != !words[2 + 2 * i]);
        let Some(i) = differs else {
            return Ok(());
        };
        // Slow path: the ranks disagree; tell the user on what.
        let claim = &mut claims[i];
        let mine = (claim.describe)();
        let texts = self.all_gather_text(&mine);
        Err(match claim.kind {
            ClaimKind::Layouts(what) => Error::LayoutMismatch(format!(
                "{what}: the ranks disagree on their inputs ({})",
                grouped(texts.iter().map(String::as_str))
            )),
            ClaimKind::Parameters(what) => Error::InvalidArgument(format!(
                "{what}: the ranks passed different parameters: {}",
                Parameters::differences(&texts)
            )),
        })
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

/// One thing the ranks must hold equal in [`Communicator::agree_all`]: a fingerprint, a
/// description of this rank's view for the message (made only when the ranks disagree), and
/// the kind of error a disagreement is.
pub struct Claim<'a> {
    fingerprint: Fingerprint,
    describe: &'a mut dyn FnMut() -> String,
    kind: ClaimKind<'a>,
}

/// What a disagreement on a [`Claim`] means.
#[derive(Clone, Copy)]
enum ClaimKind<'a> {
    /// Layouts, spaces, roots: [`Error::LayoutMismatch`] naming the operation.
    Layouts(&'a str),
    /// Named values: [`Error::InvalidArgument`] naming those that differ.
    Parameters(&'a str),
}

impl<'a> Claim<'a> {
    /// Layouts, spaces, roots or widths that every rank must hold equal for the operation
    /// `what`: a disagreement is [`Error::LayoutMismatch`] listing every distinct
    /// `describe()` with the ranks that gave it (as [`Communicator::agree_on`]).
    pub fn layouts(
        what: &'a str,
        fingerprint: Fingerprint,
        describe: &'a mut dyn FnMut() -> String,
    ) -> Self {
        Claim {
            fingerprint,
            describe,
            kind: ClaimKind::Layouts(what),
        }
    }

    /// Parameters that every rank must pass equal (a solver's `niter`, `tol`, variant, ...):
    /// a disagreement is [`Error::InvalidArgument`] naming `what` and every parameter whose
    /// value differs, with the ranks that passed each value. `describe` must return
    /// [`Parameters::encode`] of the same parameters.
    pub fn parameters(
        what: &'a str,
        params: &Parameters,
        describe: &'a mut dyn FnMut() -> String,
    ) -> Self {
        Claim {
            fingerprint: params.fingerprint(),
            describe,
            kind: ClaimKind::Parameters(what),
        }
    }
}

/// Named values that every rank must pass equal, such as the parameters of a solver that decide
/// which collective calls it makes (iteration counts, tolerances, variants). Each value is kept
/// as its `Debug` text, which tells apart every two different values of the numbers, enums and
/// lists used as parameters (`f64`'s is its shortest round-trip form), so the fingerprint
/// differs whenever a value does. No communication.
///
/// ```
/// use distlops_core::comm::Parameters;
/// let a = Parameters::default().with("niter", &10).with("tol", &1e-4);
/// let b = Parameters::default().with("niter", &10).with("tol", &1e-5);
/// assert_ne!(a.fingerprint(), b.fingerprint());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parameters {
    entries: Vec<(&'static str, String)>,
}

/// Separates the entries of [`Parameters::encode`] (an ASCII record separator, which no `Debug`
/// text of a number, enum or list contains).
const ENTRY: char = '\u{1e}';
/// Separates a name from its value in [`Parameters::encode`] (an ASCII unit separator).
const VALUE: char = '\u{1f}';

impl Parameters {
    /// Adds the parameter `name` with the `Debug` text of `value`.
    #[must_use]
    pub fn with(mut self, name: &'static str, value: &dyn std::fmt::Debug) -> Self {
        self.entries.push((name, format!("{value:?}")));
        self
    }

    /// The fingerprint of every name and value, in order.
    pub fn fingerprint(&self) -> Fingerprint {
        self.entries.iter().fold(
            Fingerprint::default().word(self.entries.len() as u64),
            |h, (n, v)| h.text(n).text(v),
        )
    }

    /// The names and values as one string, for [`Claim::parameters`].
    pub fn encode(&self) -> String {
        let items: Vec<String> = self
            .entries
            .iter()
            .map(|(n, v)| format!("{n}{VALUE}{v}"))
            .collect();
        items.join(&ENTRY.to_string())
    }

    /// The parameters whose values differ between the ranks' [`encode`](Self::encode)d texts
    /// (in rank order), each with its values and the ranks that gave them.
    fn differences(texts: &[String]) -> String {
        let decoded: Vec<Vec<(&str, &str)>> = texts
            .iter()
            .map(|t| {
                t.split(ENTRY)
                    .filter(|e| !e.is_empty())
                    .map(|e| e.split_once(VALUE).unwrap_or((e, "")))
                    .collect()
            })
            .collect();
        let mut names: Vec<&str> = Vec::new();
        for (n, _) in decoded.iter().flatten() {
            if !names.contains(n) {
                names.push(n);
            }
        }
        let value = |rank: usize, name: &str| {
            decoded[rank]
                .iter()
                .find(|(n, _)| *n == name)
                .map_or("(none)", |(_, v)| *v)
        };
        let differing: Vec<String> = names
            .iter()
            .filter(|&&n| (1..texts.len()).any(|r| value(r, n) != value(0, n)))
            .map(|&n| format!("{n} ({})", grouped((0..texts.len()).map(|r| value(r, n)))))
            .collect();
        if differing.is_empty() {
            "(their values print alike)".into()
        } else {
            differing.join("; ")
        }
    }
}

/// Every distinct text with the ranks that gave it: `rank(s) [0, 2]: a; rank(s) [1]: b`.
fn grouped<'t>(texts: impl Iterator<Item = &'t str>) -> String {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    for (r, t) in texts.enumerate() {
        match groups.iter_mut().find(|(g, _)| *g == t) {
            Some((_, ranks)) => ranks.push(r),
            None => groups.push((t, vec![r])),
        }
    }
    let list: Vec<String> = groups
        .iter()
        .map(|(t, ranks)| format!("rank(s) {ranks:?}: {t}"))
        .collect();
    list.join("; ")
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

    #[test]
    fn parameters_that_differ_are_named_with_every_rank_s_value() {
        let out = Threads::run(3, |comm| {
            let variant = if comm.rank() == 1 {
                "Pipelined"
            } else {
                "Classic"
            };
            let params = Parameters::default()
                .with("niter", &10)
                .with("variant", &variant);
            let mut encode = || params.encode();
            let mut spaces = || "spaces".to_string();
            comm.agree_all(
                Ok(()),
                &mut [
                    Claim::layouts("CGLS", Fingerprint::default(), &mut spaces),
                    Claim::parameters("CGLS", &params, &mut encode),
                ],
            )
        });
        for e in out {
            let msg = e.unwrap_err().to_string();
            assert!(
                msg.contains("CGLS: the ranks passed different parameters: variant")
                    && msg.contains(r#"rank(s) [0, 2]: "Classic"; rank(s) [1]: "Pipelined""#)
                    && !msg.contains("niter"),
                "{msg}"
            );
        }
    }
}
