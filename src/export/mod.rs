//! Turning a [`Report`] into the bytes of each output file. Where the bytes go is
//! the caller's business (see `app`), so every format is testable in memory.
//!
//! Numbers are written with a fixed number of decimals per column, so files are
//! byte-identical for a seed and diff cleanly between versions.

pub mod cache_csv;
pub mod defences_csv;
pub mod html;
pub mod proxies_csv;
pub mod replicas_csv;
pub mod risk_csv;
pub mod slow_csv;
pub mod summary_csv;
pub mod sweep_csv;
pub mod tiers_csv;
pub mod timeseries_csv;
pub mod tip_csv;

use crate::metrics::Report;
use crate::metrics::columns::fixed;

/// Errors while serialising (in practice only a CSV writer failure).
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The CSV writer failed.
    #[error("cannot write CSV: {0}")]
    Csv(#[from] csv::Error),
    /// The in-memory buffer could not be taken back from the writer.
    #[error("cannot finish CSV: {0}")]
    Flush(String),
}

/// An output format: a file name and a way to serialise a report into it.
pub trait Exporter {
    /// The file name inside the results folder.
    fn file_name(&self) -> &'static str;
    /// The file's bytes.
    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ExportError>;
    /// Whether the report has anything for this file (default: always).
    fn applies(&self, _report: &Report) -> bool {
        true
    }
}

/// Every CSV exporter, in the order they are written.
pub fn csv_exporters() -> Vec<Box<dyn Exporter>> {
    vec![
        Box::new(summary_csv::SummaryCsv),
        Box::new(timeseries_csv::TimeseriesCsv),
        Box::new(replicas_csv::ReplicasCsv),
        Box::new(tiers_csv::TiersCsv),
        Box::new(proxies_csv::ProxiesCsv),
        Box::new(slow_csv::SlowCsv),
        Box::new(defences_csv::DefencesCsv),
        Box::new(cache_csv::CacheCsv),
    ]
}

/// Writes `rows` (header first) to CSV bytes.
fn to_csv(rows: impl IntoIterator<Item = Vec<String>>) -> Result<Vec<u8>, ExportError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.write_record(&row)?;
    }
    w.into_inner()
        .map_err(|e| ExportError::Flush(e.to_string()))
}
