//! The error-versus-rank data (`docs/error_vs_rank.csv`): for each `m` and rank, whether a
//! model is certified (with its exact maximal error), the rank refuted by a lower-bound
//! certificate, or open (with the best float error a search reached, when one ran). [`parse`]
//! reads the file (the test `tests/error_vs_rank.rs` re-checks every certified and refuted row
//! against its certificate); [`svg`] draws it.

/// What is known at one `(m, rank)`.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// A certificate holds a model of this rank with this exact maximal error.
    Certified {
        /// The exact maximal error, as written (`p/q`).
        exact: String,
        /// The same as a float, for drawing.
        error: f64,
    },
    /// A lower-bound certificate proves that no model of this rank solves the task.
    Refuted,
    /// Neither: the best float maximal error of a search, if one ran.
    Open {
        /// Least float maximal error the search reached.
        best_float: Option<f64>,
    },
}

/// One row of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Bits per token.
    pub m: u32,
    /// Feature rank.
    pub rank: u32,
    /// What is known.
    pub status: Status,
    /// The certificate the row rests on, if any (a repository path).
    pub certificate: Option<String>,
    /// The command that produced the row's result.
    pub command: String,
}

/// The header line the file must start with.
pub const HEADER: &str =
    "m,rank,status,max_error,max_error_decimal,margin,best_float_error,certificate,command";

/// Parses the file. Rows whose rank is a range (`4..7`, nothing searched) carry no point and are
/// skipped; the last field (the command) may contain commas.
pub fn parse(text: &str) -> Result<Vec<Row>, String> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return Err(format!("the first line must be `{HEADER}`"));
    }
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let at = |e: String| format!("line {}: {e}", i + 2);
        let f: Vec<&str> = line.splitn(9, ',').collect();
        if f.len() != 9 {
            return Err(at(format!("{} fields, expected 9", f.len())));
        }
        let m = f[0].parse::<u32>().map_err(|e| at(format!("m: {e}")))?;
        let Ok(rank) = f[1].parse::<u32>() else {
            if f[1].contains("..") {
                continue;
            }
            return Err(at(format!(
                "rank `{}` is neither a number nor a range",
                f[1]
            )));
        };
        let float = |s: &str, what: &str| -> Result<Option<f64>, String> {
            if s.is_empty() {
                return Ok(None);
            }
            s.parse::<f64>()
                .map(Some)
                .map_err(|e| at(format!("{what}: {e}")))
        };
        let status = if f[2].starts_with("certified") {
            Status::Certified {
                exact: f[3].to_string(),
                error: float(f[4], "max_error_decimal")?
                    .ok_or_else(|| at("a certified row needs max_error_decimal".into()))?,
            }
        } else if f[2] == "refuted" {
            Status::Refuted
        } else if f[2].starts_with("open") {
            // A comma inside the status would shift every later field and lose the point
            // without a word: an open row has no exact error, decimal or margin.
            if f[3..6].iter().any(|x| !x.is_empty()) {
                return Err(at(
                    "an open row has empty max_error, max_error_decimal and margin fields \
                     (is there a comma in its status?)"
                        .into(),
                ));
            }
            Status::Open {
                best_float: float(f[6], "best_float_error")?,
            }
        } else {
            return Err(at(format!("unknown status `{}`", f[2])));
        };
        rows.push(Row {
            m,
            rank,
            status,
            certificate: (!f[7].is_empty()).then(|| f[7].to_string()),
            command: f[8].to_string(),
        });
    }
    Ok(rows)
}

/// Draws the rows with `m >= min_m` as an SVG: per `m`, the certified errors (filled, joined by
/// a line), the best float errors of open ranks (hollow) and the refuted ranks (crosses on the
/// line `1/2`, where every model of that rank fails).
#[cfg(feature = "plot")]
pub fn svg(rows: &[Row], min_m: u32) -> Result<String, String> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| format!("drawing the plot: {e}");
    let rows: Vec<&Row> = rows.iter().filter(|r| r.m >= min_m).collect();
    let max_rank = rows.iter().map(|r| r.rank).max().ok_or("nothing to plot")?;
    let mut ms: Vec<u32> = rows.iter().map(|r| r.m).collect();
    ms.dedup();
    let palette = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (800, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Maximal error against rank, r*(m, 3): certified (filled), best float (hollow), refuted (x)",
                ("sans-serif", 16),
            )
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(0.5f64..(f64::from(max_rank) + 0.5), 0.3f64..0.7f64)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("feature rank")
            .y_desc("maximal error")
            .x_labels(max_rank as usize)
            .max_light_lines(0)
            .x_label_formatter(&|x| format!("{}", x.round() as i64))
            .draw()
            .map_err(|e| err(&e))?;
        let half = [(0.5, 0.5), (f64::from(max_rank) + 0.5, 0.5)];
        chart
            .draw_series(LineSeries::new(half, BLACK.stroke_width(1)))
            .map_err(|e| err(&e))?;
        for (i, &m) in ms.iter().enumerate() {
            let color = palette[i % palette.len()];
            let of_m: Vec<&&Row> = rows.iter().filter(|r| r.m == m).collect();
            let certified: Vec<(f64, f64)> = of_m
                .iter()
                .filter_map(|r| match r.status {
                    Status::Certified { error, .. } => Some((f64::from(r.rank), error)),
                    _ => None,
                })
                .collect();
            chart
                .draw_series(LineSeries::new(
                    certified.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(|e| err(&e))?
                .label(format!("m = {m}"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(
                    certified
                        .iter()
                        .map(|&(x, y)| Circle::new((x, y), 4, color.filled())),
                )
                .map_err(|e| err(&e))?;
            // Float errors above the frame are drawn at its top edge.
            let open = of_m.iter().filter_map(|r| match r.status {
                Status::Open {
                    best_float: Some(e),
                } => Some(Circle::new((f64::from(r.rank), e.min(0.69)), 4, color)),
                _ => None,
            });
            chart.draw_series(open).map_err(|e| err(&e))?;
            let refuted = (of_m.iter())
                .filter(|r| matches!(r.status, Status::Refuted))
                .map(|r| Cross::new((f64::from(r.rank), 0.5), 5, color.stroke_width(2)));
            chart.draw_series(refuted).map_err(|e| err(&e))?;
        }
        super::legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(buf)
}
