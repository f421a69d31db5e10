//! `summary.csv`: one row per strategy, a value for each column of
//! [`SUMMARY`], which says how each is read.

use super::{ExportError, Exporter, to_csv};
use crate::metrics::Report;
use crate::metrics::columns::SUMMARY;

/// Writes `summary.csv`.
pub struct SummaryCsv;

impl Exporter for SummaryCsv {
    fn file_name(&self) -> &'static str {
        "summary.csv"
    }

    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ExportError> {
        let header = SUMMARY.iter().map(|c| c.name.to_string()).collect();
        let rows = report
            .runs
            .iter()
            .map(|run| SUMMARY.iter().map(|c| (c.value)(report, run)).collect());
        to_csv(std::iter::once(header).chain(rows))
    }
}
