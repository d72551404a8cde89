//! `log --stats --format svg`: a small badge, in the flat style of shields.io, that CI can
//! publish: label `proven`, the share of proven commits as its value, coloured by threshold.

use std::io::{self, Write};

use super::StatsReport;

/// The badge's label.
const LABEL: &str = "proven";

/// The colour for a share of proven commits: the thresholds shields.io's coverage badges use.
fn colour(percent: Option<u64>) -> &'static str {
    match percent {
        None => "#9f9f9f",
        Some(100..) => "#4c1",
        Some(90..) => "#97ca00",
        Some(75..) => "#a4a61d",
        Some(60..) => "#dfb317",
        Some(40..) => "#fe7d37",
        Some(_) => "#e05d44",
    }
}

/// An estimate of a text's width in pixels in 11 px Verdana, wide enough for digits and `%`.
fn width(text: &str) -> usize {
    text.chars().count() * 7 + 10
}

/// Write the badge for `stats` as one SVG document. Its text is only the fixed label, digits
/// and a few words, so nothing needs escaping.
pub(crate) fn badge(stats: &StatsReport, out: &mut dyn Write) -> io::Result<()> {
    let value = stats
        .proven_percent
        .map_or_else(|| "n/a".to_string(), |p| format!("{p}%"));
    let mut summary = format!("proven {} of {} commits", stats.proven, stats.commits);
    if let Some(signed) = stats.signed {
        summary.push_str(&format!(", signed {signed}"));
    }
    let fill = colour(stats.proven_percent);
    let (left, right) = (width(LABEL), width(&value));
    let total = left + right;
    let (label_x, value_x) = (left * 5, left * 10 + right * 5);
    writeln!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" aria-label="{LABEL}: {value}">
  <title>{LABEL}: {value}</title>
  <desc>{summary}</desc>
  <linearGradient id="s" x2="0" y2="100%">
    <stop offset="0" stop-color="#bbb" stop-opacity=".1"/>
    <stop offset="1" stop-opacity=".1"/>
  </linearGradient>
  <clipPath id="r"><rect width="{total}" height="20" rx="3" fill="#fff"/></clipPath>
  <g clip-path="url(#r)">
    <rect width="{left}" height="20" fill="#555"/>
    <rect x="{left}" width="{right}" height="20" fill="{fill}"/>
    <rect width="{total}" height="20" fill="url(#s)"/>
  </g>
  <g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="110" transform="scale(.1)">
    <text x="{label_x}" y="140">{LABEL}</text>
    <text x="{value_x}" y="140">{value}</text>
  </g>
</svg>"##
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_colour_goes_from_red_to_bright_green_with_the_share() {
        assert_eq!(colour(Some(100)), "#4c1");
        assert_eq!(colour(Some(99)), "#97ca00");
        assert_eq!(colour(Some(82)), "#a4a61d");
        assert_eq!(colour(Some(60)), "#dfb317");
        assert_eq!(colour(Some(59)), "#fe7d37");
        assert_eq!(colour(Some(0)), "#e05d44");
        assert_eq!(colour(None), "#9f9f9f");
    }
}
