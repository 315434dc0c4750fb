//! The PyLops iteration table (printed on rank 0 only): the header, the rows the `itershow`
//! rule selects, the footer, and Python's number formats.

use distlops_core::{DistVector, Engine, LinearOperator, RealScalar, Scalar};

/// Python's `format(v, f"{width}.{prec}e")`: `1.0000e-04`, exponent with a sign and at least
/// two digits, right-aligned in `width`.
pub(crate) fn fmt_e(v: f64, prec: usize, width: usize) -> String {
    let s = if v.is_nan() {
        "nan".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        let s = format!("{v:.prec$e}");
        let (mant, exp) = s.split_once('e').expect("`{:e}` always writes an exponent");
        let exp: i32 = exp.parse().expect("`{:e}` writes an integer exponent");
        format!("{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    };
    format!("{s:>width$}")
}

/// Python's format of a complex number with `1.2e`: `1.00e+00-2.00e+00j`.
pub(crate) fn fmt_complex(re: f64, im: f64) -> String {
    let im_s = fmt_e(im, 2, 0);
    let sign = if im_s.starts_with('-') { "" } else { "+" };
    format!("{}{sign}{im_s}j", fmt_e(re, 2, 0))
}

/// The first local element of `x` on this rank (the first part of a stack), as PyLops prints
/// `x[0]`: `11.4e` for real types, `1.2e` for complex ones; `-` if this rank holds none.
pub(crate) fn fmt_x0<T: Scalar, E: Engine>(x: &DistVector<T, E>) -> String {
    let mut v = x;
    while let DistVector::Stacked(s) = v {
        v = &s.parts()[0];
    }
    let first = match v {
        DistVector::Array(a) => E::download(a.local_block()).iter().next().copied(),
        DistVector::Stacked(_) => unreachable!("descended to a plain array"),
    };
    match first {
        None => format!("{:>11}", "-"),
        Some(z) if T::IS_COMPLEX => fmt_complex(z.re().to_f64(), z.im().to_f64()),
        Some(z) => fmt_e(z.re().to_f64(), 4, 11),
    }
}

/// PyLops' `itershow = (first, last, every)` rule for the step that starts at `iiter`: the
/// first `first` steps, the last `last` ones before `niter`, and every `every`-th (never when
/// `every == 0`).
pub(crate) fn selected(iiter: usize, niter: usize, itershow: (usize, usize, usize)) -> bool {
    let (first, last, every) = itershow;
    iiter < first || niter.saturating_sub(iiter) < last || iiter.checked_rem(every) == Some(0)
}

/// Prints the [`header`] of `op` (rank 0 decides by calling it only there): the column titles
/// are `columns.0` for complex types and `columns.1` for real ones.
pub(crate) fn print_header<T: Scalar, E: Engine>(
    name: &str,
    nbar: usize,
    op: &dyn LinearOperator<T, E>,
    params: &str,
    columns: (&str, &str),
) {
    let columns = if T::IS_COMPLEX { columns.0 } else { columns.1 };
    let (rows, cols) = (op.range().global_len(), op.domain().global_len());
    println!("{}", header(name, nbar, rows, cols, params, columns));
}

/// The header: solver name, operator shape, parameters, column titles.
pub(crate) fn header(
    name: &str,
    nbar: usize,
    rows: usize,
    cols: usize,
    params: &str,
    columns: &str,
) -> String {
    let bar = "-".repeat(nbar);
    format!("{name}\n{bar}\nThe Operator Op has {rows} rows and {cols} cols\n{params}\n{bar}\n\n{columns}")
}

/// The closing lines: iterations and elapsed time.
pub(crate) fn footer(nbar: usize, iterations: usize, seconds: f64) -> String {
    format!(
        "\nIterations = {iterations}        Total time (s) = {seconds:.2}\n{}\n",
        "-".repeat(nbar)
    )
}

/// A real value in the `11.4e` format of the cost columns.
pub(crate) fn fmt_cost<R: RealScalar>(v: R) -> String {
    fmt_e(v.to_f64(), 4, 11)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_exponent_format() {
        assert_eq!(fmt_e(1e-4, 6, 10), "1.000000e-04");
        assert_eq!(fmt_e(1.5, 4, 11), " 1.5000e+00");
        assert_eq!(fmt_e(-1.5e123, 4, 11), "-1.5000e+123");
        assert_eq!(fmt_e(0.0, 4, 11), " 0.0000e+00");
        assert_eq!(fmt_e(f64::NAN, 4, 11), "        nan");
        assert_eq!(fmt_e(f64::NEG_INFINITY, 4, 0), "-inf");
        assert_eq!(fmt_complex(1.0, -2.0), "1.00e+00-2.00e+00j");
        assert_eq!(fmt_complex(-0.5, 0.25), "-5.00e-01+2.50e-01j");
    }

    #[test]
    fn itershow_rule() {
        // (10, 10, 10) over 100 steps: 0..10, 90..100, and the multiples of 10.
        let shown: Vec<usize> = (0..100)
            .filter(|&i| selected(i, 100, (10, 10, 10)))
            .collect();
        let expected: Vec<usize> = (0..10).chain((10..90).step_by(10)).chain(90..100).collect();
        assert_eq!(shown, expected);
        assert!(!selected(5, 100, (0, 0, 0)));
    }

    #[test]
    fn header_and_footer() {
        let h = header("CG", 5, 3, 3, "tol = 1", "  Itn");
        assert_eq!(
            h,
            "CG\n-----\nThe Operator Op has 3 rows and 3 cols\ntol = 1\n-----\n\n  Itn"
        );
        assert_eq!(
            footer(3, 7, 0.004),
            "\nIterations = 7        Total time (s) = 0.00\n---\n"
        );
    }
}
