//! Parsers of option values: a value outside its domain is a usage error
//! (exit code 64) from clap, before a device is opened or a file read.

/// A whole number ≥ 1.
pub fn positive_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        Ok(_) => Err("must be at least 1".into()),
        Err(_) => Err("expected a whole number ≥ 1".into()),
    }
}

/// A finite number > 0.
pub fn positive_number(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        Ok(_) => Err("must be a positive finite number".into()),
        Err(_) => Err("expected a number".into()),
    }
}

/// A finite number ≥ 0.
pub fn non_negative_number(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
        Ok(_) => Err("must be a finite number ≥ 0".into()),
        Err(_) => Err("expected a number".into()),
    }
}

/// A finite number, of either sign.
pub fn finite_number(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err("must be a finite number".into()),
        Err(_) => Err("expected a number".into()),
    }
}

/// `auto`, `cpu` or `cuda`, as [`gpumat::Device::from_name`] reads them.
pub fn device_name(s: &str) -> Result<String, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "auto" | "cpu" | "cuda" => Ok(s.to_string()),
        _ => Err(format!("unknown device '{s}' (expected auto, cpu or cuda)")),
    }
}
