//! [`Duration`]: Kubernetes' `metav1.Duration`, a Go duration string in JSON (`"1h30m"`).
//!
//! k8s-openapi has no type for it, and a `String` would neither refuse `"soon"` nor write
//! `"90m"` back as Go does (`"1h30m0s"`): Go's `time.ParseDuration` and
//! `time.Duration.String` are followed to the letter, so that an object a Go controller
//! and a Rust one read and write is the same object.

use std::fmt;
use std::str::FromStr;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::schema::{Node, Schema, Shape};

/// A signed span of time in nanoseconds, as Go's `time.Duration`, written as Go writes it
/// (`"1h0m0s"`, `"1.5s"`, `"100ms"`, `"-2m0s"`, `"0s"`) and read from any string Go's
/// `time.ParseDuration` reads (`"90m"`, `"1.5h"`, `"300ms"`, `"2h45m"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration {
    nanoseconds: i64,
}

/// A string Go's `time.ParseDuration` refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseDurationError(String);

impl fmt::Display for ParseDurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "time: invalid duration {:?}", self.0)
    }
}

impl std::error::Error for ParseDurationError {}

const NANOSECOND: u64 = 1;
const MICROSECOND: u64 = 1_000 * NANOSECOND;
const MILLISECOND: u64 = 1_000 * MICROSECOND;
const SECOND: u64 = 1_000 * MILLISECOND;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;

/// Go's unit names; `µs` is written both with U+00B5 (micro sign) and U+03BC (mu).
const UNITS: [(&str, u64); 8] = [
    ("ns", NANOSECOND),
    ("us", MICROSECOND),
    ("\u{b5}s", MICROSECOND),
    ("\u{3bc}s", MICROSECOND),
    ("ms", MILLISECOND),
    ("s", SECOND),
    ("m", MINUTE),
    ("h", HOUR),
];

impl Duration {
    /// `nanoseconds` long (negative: before).
    pub const fn from_nanos(nanoseconds: i64) -> Self {
        Duration { nanoseconds }
    }

    /// Its length in nanoseconds.
    pub const fn as_nanos(self) -> i64 {
        self.nanoseconds
    }

    /// As a `std::time::Duration`; `None` when negative.
    pub fn to_std(self) -> Option<std::time::Duration> {
        u64::try_from(self.nanoseconds)
            .ok()
            .map(std::time::Duration::from_nanos)
    }
}

impl TryFrom<std::time::Duration> for Duration {
    type Error = std::num::TryFromIntError;

    /// Fails beyond Go's range (about 292 years).
    fn try_from(duration: std::time::Duration) -> Result<Self, Self::Error> {
        i64::try_from(duration.as_nanos()).map(Duration::from_nanos)
    }
}

impl fmt::Display for Duration {
    /// Go's `time.Duration.String`: hours, minutes and seconds with the fraction that is not
    /// zero, or below a second the largest unit under it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.nanoseconds < 0 { "-" } else { "" };
        let length = self.nanoseconds.unsigned_abs();
        if length == 0 {
            return f.write_str("0s");
        }
        if length < SECOND {
            let (unit, digits) = match length {
                _ if length < MICROSECOND => ("ns", 0),
                _ if length < MILLISECOND => ("\u{b5}s", 3),
                _ => ("ms", 6),
            };
            let (whole, fraction) = split(length, digits);
            return write!(f, "{sign}{whole}{fraction}{unit}");
        }
        let (seconds, fraction) = split(length, 9);
        let (minutes, hours) = (seconds / 60, seconds / 3600);
        let seconds = seconds % 60;
        match (hours, minutes) {
            (0, 0) => write!(f, "{sign}{seconds}{fraction}s"),
            (0, _) => write!(f, "{sign}{minutes}m{seconds}{fraction}s"),
            _ => write!(f, "{sign}{hours}h{}m{seconds}{fraction}s", minutes % 60),
        }
    }
}

/// `value` as a whole part and, where it is not zero, `.` and the last `digits` digits
/// without their trailing zeros.
fn split(value: u64, digits: u32) -> (u64, String) {
    let scale = 10u64.pow(digits);
    let fraction = value % scale;
    if fraction == 0 {
        return (value / scale, String::new());
    }
    let text = format!("{fraction:0width$}", width = digits as usize);
    (value / scale, format!(".{}", text.trim_end_matches('0')))
}

impl FromStr for Duration {
    type Err = ParseDurationError;

    /// Go's `time.ParseDuration`: a sign, then decimal numbers each with a unit (`ns`,
    /// `us`/`µs`, `ms`, `s`, `m`, `h`); `"0"` alone needs none.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || ParseDurationError(text.to_owned());
        let (negative, mut rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        if rest == "0" {
            return Ok(Duration::default());
        }
        if rest.is_empty() {
            return Err(invalid());
        }
        let mut total: u64 = 0;
        while !rest.is_empty() {
            let (length, after) = component(rest).ok_or_else(invalid)?;
            total = total
                .checked_add(length)
                .filter(|total| *total <= 1 << 63)
                .ok_or_else(invalid)?;
            rest = after;
        }
        let limit = if negative {
            1u64 << 63
        } else {
            (1u64 << 63) - 1
        };
        if total > limit {
            return Err(invalid());
        }
        let nanoseconds = if negative {
            (total as i64).wrapping_neg()
        } else {
            total as i64
        };
        Ok(Duration { nanoseconds })
    }
}

/// The first number-and-unit of `text` in nanoseconds, and what follows it; `None` where Go
/// reports an error (no digits, no or an unknown unit, more than 2⁶³ nanoseconds).
fn component(text: &str) -> Option<(u64, &str)> {
    const LIMIT: u64 = 1 << 63;
    let whole_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (whole, mut rest) = text.split_at(whole_end);
    let whole = whole.bytes().try_fold(0u64, |value, digit| {
        let value = value
            .checked_mul(10)?
            .checked_add(u64::from(digit - b'0'))?;
        (value <= LIMIT).then_some(value)
    })?;
    let mut fraction = (0, 1.0);
    let mut post = false;
    if let Some(after_point) = rest.strip_prefix('.') {
        let end = after_point
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after_point.len());
        post = end > 0;
        fraction = leading_fraction(&after_point[..end]);
        rest = &after_point[end..];
    }
    if whole_end == 0 && !post {
        return None;
    }
    let unit_end = rest
        .find(|c: char| c == '.' || c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (unit, rest) = rest.split_at(unit_end);
    let scale = UNITS.iter().find(|(name, _)| *name == unit)?.1;
    if whole > LIMIT / scale {
        return None;
    }
    let mut length = whole * scale;
    let (digits, divisor) = fraction;
    if digits > 0 {
        // Go adds the fraction in floating point, as here, truncated.
        length += (digits as f64 * (scale as f64 / divisor)) as u64;
        if length > LIMIT {
            return None;
        }
    }
    Some((length, rest))
}

/// Go's `leadingFraction`: the digits as an integer (those that fit) and 10 to the power
/// of their count.
fn leading_fraction(digits: &str) -> (u64, f64) {
    let mut value: u64 = 0;
    let mut divisor = 1.0;
    for digit in digits.bytes() {
        if value > (i64::MAX as u64) / 10 {
            break;
        }
        let next = value * 10 + u64::from(digit - b'0');
        if next > 1 << 63 {
            break;
        }
        value = next;
        divisor *= 10.0;
    }
    (value, divisor)
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

crate::apply::applied_as_themselves!(Duration);

impl Schema for Duration {
    /// controller-gen's for `metav1.Duration`: a string, nothing more.
    fn schema() -> JSONSchemaProps {
        JSONSchemaProps {
            type_: Some("string".to_owned()),
            ..JSONSchemaProps::default()
        }
    }

    fn node() -> Node {
        Node::inline(Self::schema())
    }

    const SHAPE: Shape<'static> = Shape::typed("Duration", "string");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<i64, ParseDurationError> {
        text.parse::<Duration>().map(Duration::as_nanos)
    }

    #[test]
    fn it_reads_what_go_reads() {
        let s = SECOND as i64;
        let cases = [
            ("0", 0),
            ("5s", 5 * s),
            ("30s", 30 * s),
            ("1478s", 1478 * s),
            ("-5s", -5 * s),
            ("+5s", 5 * s),
            ("-0", 0),
            ("5.0s", 5 * s),
            ("5.6s", 5 * s + 600_000_000),
            ("5.s", 5 * s),
            (".5s", 500_000_000),
            ("1.004s", s + 4_000_000),
            ("100.00100s", 100 * s + 1_000_000),
            ("10ns", 10),
            ("11us", 11_000),
            ("12\u{b5}s", 12_000),
            ("12\u{3bc}s", 12_000),
            ("13ms", 13_000_000),
            ("14s", 14 * s),
            ("15m", 15 * 60 * s),
            ("16h", 16 * 3600 * s),
            ("3h30m", (3 * 3600 + 30 * 60) * s),
            ("10.5s4m", 4 * 60 * s + 10 * s + 500_000_000),
            ("-2m3.4s", -(2 * 60 * s + 3 * s + 400_000_000)),
            (
                "1h2m3s4ms5us6ns",
                3600 * s + 120 * s + 3 * s + 4_000_000 + 5_000 + 6,
            ),
            ("39h9m14.425s", (39 * 3600 + 9 * 60 + 14) * s + 425_000_000),
            ("52763797000ns", 52_763_797_000),
            ("0.3333333333333333333h", 20 * 60 * s),
            ("9007199254740993ns", 9_007_199_254_740_993),
            ("9223372036854775807ns", i64::MAX),
            ("-9223372036854775808ns", i64::MIN),
            ("0.100000000000000000000h", 6 * 60 * s),
        ];
        for (text, nanoseconds) in cases {
            assert_eq!(parsed(text), Ok(nanoseconds), "{text}");
        }
    }

    #[test]
    fn it_refuses_what_go_refuses() {
        for text in [
            "",
            "3",
            "-",
            "s",
            ".",
            "-.",
            ".s",
            "+.s",
            "1d",
            "\u{b5}",
            "3000000h",
            "9223372036854775808ns",
            "-9223372036854775809ns",
            "string",
            "1h ",
        ] {
            assert_eq!(
                parsed(text),
                Err(ParseDurationError(text.to_owned())),
                "{text:?}"
            );
        }
    }

    #[test]
    fn it_writes_what_go_writes() {
        let cases = [
            (0, "0s"),
            (1, "1ns"),
            (1_100, "1.1\u{b5}s"),
            (2_200_000, "2.2ms"),
            (3_300_000_000, "3.3s"),
            ((4 * 60 + 5) * SECOND as i64, "4m5s"),
            ((4 * 60 + 5) * SECOND as i64 + 1_000_000, "4m5.001s"),
            (
                (5 * 3600 + 6 * 60 + 7) * SECOND as i64 + 1,
                "5h6m7.000000001s",
            ),
            (8 * 60 * SECOND as i64 + 1, "8m0.000000001s"),
            (3600 * SECOND as i64, "1h0m0s"),
            (-3600 * SECOND as i64, "-1h0m0s"),
            (i64::MAX, "2562047h47m16.854775807s"),
            (i64::MIN, "-2562047h47m16.854775808s"),
        ];
        for (nanoseconds, text) in cases {
            assert_eq!(Duration::from_nanos(nanoseconds).to_string(), text);
        }
    }

    #[test]
    fn json_holds_the_string_and_a_bad_one_is_refused() {
        let read: Duration = serde_json::from_str("\"90m\"").unwrap();
        assert_eq!(serde_json::to_string(&read).unwrap(), "\"1h30m0s\"");
        let error = serde_json::from_str::<Duration>("\"soon\"").unwrap_err();
        assert!(error.to_string().contains("invalid duration"), "{error}");
        assert_eq!(read.to_std(), Some(std::time::Duration::from_secs(90 * 60)));
        assert_eq!(Duration::from_nanos(-1).to_std(), None);
    }
}
