//! `nkrank plot`: the certified bounds on `r*(m, N)` against `m`, on a log scale, with the
//! theory curve and `2^m` for reference. The data are exactly the rows of `nkrank table` (one
//! function, [`series`], shared with the test that compares them); only [`svg`] draws.

pub mod errors;

use crate::check::report::{table_of, FileResult};

/// One point of the plot: the table's row for `m`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    /// Bits per token.
    pub m: u32,
    /// Certified lower bound.
    pub lower: u64,
    /// Certified upper bound, if any.
    pub upper: Option<u64>,
    /// Theory curve `T(m)` (best certified fooling-set bound at this or a smaller `m`), if any.
    pub theory: Option<u64>,
}

/// The plotted series for sequence length `length`: one point per table row, in `m` order.
pub fn series(results: &[FileResult], length: u32) -> Vec<Point> {
    table_of(results)
        .0
        .into_iter()
        .filter(|r| r.length == length)
        .map(|r| Point {
            m: r.m,
            lower: r.lower,
            upper: r.upper,
            theory: r.theory,
        })
        .collect()
}

/// Draws the series as an SVG document.
#[cfg(feature = "plot")]
pub fn svg(points: &[Point], length: u32) -> Result<String, String> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| format!("drawing the plot: {e}");
    let max_m = points.iter().map(|p| p.m).max().ok_or("nothing to plot")?;
    // The bounds, not 2^m, set the scale: 2^m is drawn up to one step above the largest m with
    // a certified upper bound (beyond it, at m = 64, it would squash every bound to the floor).
    let largest = points
        .iter()
        .flat_map(|p| [Some(p.lower), p.upper, p.theory])
        .flatten()
        .max()
        .unwrap_or(1) as f64;
    let upper_m = points
        .iter()
        .filter(|p| p.upper.is_some())
        .map(|p| p.m)
        .max();
    let top = (largest * 4.0).max(upper_m.map_or(0.0, |m| 2f64.powi(m as i32 + 1)));
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (800, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Certified bounds on r*(m, {length})"),
                ("sans-serif", 22),
            )
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(0.5f64..(max_m as f64 + 0.5), (0.8f64..top).log_scale())
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("m (bits per token)")
            .y_desc("rank")
            .x_labels((max_m as usize + 1).min(17))
            .y_label_formatter(&|y| format!("{}", y.round() as u64))
            // Bold lines at the labels only: fine lines between integers of m mean nothing.
            .max_light_lines(0)
            .x_label_formatter(&|x| format!("{}", x.round() as i64))
            .draw()
            .map_err(|e| err(&e))?;
        let pow2: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (p.m as f64, 2f64.powi(p.m as i32)))
            .filter(|&(_, y)| y <= top)
            .collect();
        let upper: Vec<(f64, f64)> = points
            .iter()
            .filter_map(|p| p.upper.map(|u| (p.m as f64, u as f64)))
            .collect();
        let lower: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (p.m as f64, p.lower as f64))
            .collect();
        let theory: Vec<(f64, f64)> = points
            .iter()
            .filter_map(|p| p.theory.map(|t| (p.m as f64, t as f64)))
            .collect();
        let grey = RGBColor(150, 150, 150);
        let green = RGBColor(0, 140, 0);
        let lines = [
            ("2^m (full rank)", &pow2, grey),
            ("certified upper bound", &upper, BLUE),
            ("certified lower bound", &lower, RED),
            ("theory curve T(m)", &theory, green),
        ];
        for (label, data, color) in lines {
            chart
                .draw_series(LineSeries::new(data.iter().copied(), color.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(
                    data.iter()
                        .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                )
                .map_err(|e| err(&e))?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(buf)
}

/// Draws the legend of a chart in one style for every plot of the project.
#[cfg(feature = "plot")]
pub(crate) fn legend<'a, DB, CT>(
    chart: &mut plotters::chart::ChartContext<'a, DB, CT>,
    position: plotters::chart::SeriesLabelPosition,
) -> Result<(), String>
where
    DB: plotters::prelude::DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate,
{
    use plotters::prelude::*;
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|e| format!("drawing the plot: {e}"))
}
