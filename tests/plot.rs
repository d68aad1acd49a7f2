//! The plot's data are the table's rows: `nkrank::plot::series` against the CSV of
//! `nkrank table` for N = 3, and the SVG holds one marker per plotted value.
#![cfg(all(feature = "solver", feature = "plot"))]
#![cfg(all(feature = "solver", feature = "plot"))]

use nkrank::check::report::{check_file, collect_files};
use nkrank::check::CheckOptions;
use nkrank::plot::{series, svg};
use nkrank::search::table_render::{render_table, TableFormat};
use std::path::PathBuf;

#[test]
fn plot_series_are_the_table_rows() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("certificates");
    let files = collect_files(&[dir]).unwrap();
    let opts = CheckOptions {
        max_error_up_to_m: 0,
    };
    let results: Vec<_> = files.iter().map(|f| check_file(f, opts)).collect();
    let csv = render_table(&results, TableFormat::Csv, 64);
    // length,m,lower,upper,theory,...
    let rows: Vec<(u32, u64, Option<u64>, Option<u64>)> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[0] == "3")
        .map(|f| {
            let opt = |s: &str| (s != "-").then(|| s.parse().unwrap());
            (
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                opt(f[3]),
                opt(f[4]),
            )
        })
        .collect();
    let points = series(&results, 3);
    assert!(points.len() >= 10, "{} points", points.len());
    let got: Vec<_> = points
        .iter()
        .map(|p| (p.m, p.lower, p.upper, p.theory))
        .collect();
    assert_eq!(got, rows);
    // r*(4, 3) = 2 and r*(5, 3) = 3 are exact in the committed set.
    assert!(got.contains(&(4, 2, Some(2), None)));
    assert!(got.contains(&(5, 3, Some(3), None)));
    let doc = svg(&points, 3).unwrap();
    assert!(
        doc.starts_with("<svg") || doc.starts_with("<?xml"),
        "{}",
        &doc[..40]
    );
    // One marker per bound, plus 2^m where it is within the drawn range (not at every m).
    let bounds = points.len()
        + points.iter().filter(|p| p.upper.is_some()).count()
        + points.iter().filter(|p| p.theory.is_some()).count();
    let circles = doc.matches("<circle").count();
    assert!(
        circles > bounds && circles < bounds + points.len(),
        "{circles} markers for {bounds} bounds"
    );
}

/// Every certified and refuted row of `docs/error_vs_rank.csv` is what its committed
/// certificate proves (rank, direction and, where the checker computes it, the exact maximal
/// error), the least certified rank per `m` is the table's upper bound, and the error plot
/// draws one marker per row with a value.
#[test]
fn error_vs_rank_rows_are_what_the_certificates_prove() {
    use nkrank::check::Bound;
    use nkrank::plot::errors::{parse, svg as error_svg, Status};
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/error_vs_rank.csv")).unwrap();
    let rows = parse(&text).unwrap();
    let opts = CheckOptions {
        max_error_up_to_m: 8,
    };
    let mut compared = 0;
    for row in &rows {
        let Some(cert) = row.certificate.as_ref().filter(|c| root.join(c).is_file()) else {
            continue;
        };
        let proven = check_file(&root.join(cert), opts).outcome.unwrap();
        assert_eq!(proven.m, row.m, "{cert}");
        match &row.status {
            Status::Certified { exact, .. } => {
                assert_eq!(
                    (proven.bound, proven.rank),
                    (Bound::Upper, u64::from(row.rank))
                );
                if let Some(e) = proven.max_error {
                    assert_eq!(&nkrank::rational::format_q(&e), exact, "{cert}");
                    compared += 1;
                }
            }
            Status::Refuted => {
                assert_eq!(proven.bound, Bound::Lower, "{cert}");
                assert!(proven.rank > u64::from(row.rank), "{cert}");
            }
            Status::Open { .. } => panic!("an open row names a committed certificate: {cert}"),
        }
    }
    assert!(compared >= 8, "only {compared} exact errors compared");
    let files = collect_files(&[root.join("certificates")]).unwrap();
    let bounds_only = CheckOptions {
        max_error_up_to_m: 0,
    };
    let results: Vec<_> = files.iter().map(|f| check_file(f, bounds_only)).collect();
    for p in series(&results, 3).iter().filter(|p| p.m <= 10) {
        let least = rows
            .iter()
            .filter(|r| r.m == p.m && matches!(r.status, Status::Certified { .. }))
            .filter(|r| {
                r.certificate
                    .as_ref()
                    .is_some_and(|c| root.join(c).is_file())
            })
            .map(|r| u64::from(r.rank))
            .min();
        assert_eq!(least, p.upper, "m = {}", p.m);
    }
    let drawn = rows
        .iter()
        .filter(|r| r.m >= 4)
        .filter(|r| {
            matches!(
                r.status,
                Status::Certified { .. }
                    | Status::Open {
                        best_float: Some(_)
                    }
            )
        })
        .count();
    let doc = error_svg(&rows, 4).unwrap();
    assert_eq!(doc.matches("<circle").count(), drawn);
}

/// A comma inside the status of an open row is an error, not a row whose point silently
/// disappears.
#[test]
fn a_comma_in_an_open_status_is_reported() {
    use nkrank::plot::errors::{parse, HEADER};
    let good = format!("{HEADER}\n9,8,open: no model (float 0.55),,,,0.55,,nkrank solve --m 9\n");
    assert_eq!(parse(&good).unwrap().len(), 1);
    let bad =
        format!("{HEADER}\n9,8,open: no model (0.55, then 0.56),,,,0.55,,nkrank solve --m 9\n");
    let err = parse(&bad).unwrap_err();
    assert!(err.contains("line 2") && err.contains("comma"), "{err}");
}
