//! `replicas.csv`: a fleet's replicas over time, long format, one row per
//! (strategy, replica, time bucket). Written only when the server is a fleet.

use super::{ExportError, Exporter, fixed, to_csv};
use crate::metrics::Report;

/// Writes `replicas.csv`.
pub struct ReplicasCsv;

impl Exporter for ReplicasCsv {
    fn file_name(&self) -> &'static str {
        "replicas.csv"
    }

    fn applies(&self, report: &Report) -> bool {
        report.runs.iter().any(|r| r.replicas.is_some())
    }

    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ExportError> {
        let width = report.metrics.bucket.as_secs_f64();
        let header = crate::metrics::columns::REPLICAS
            .iter()
            .map(|c| c.name.to_string())
            .collect();
        let rows = report.runs.iter().flat_map(|run| {
            let per = run.buckets.len().max(1);
            run.replicas.iter().flat_map(move |series| {
                series
                    .chunks(per)
                    .enumerate()
                    .flat_map(move |(replica, rows)| {
                        rows.iter().enumerate().map(move |(i, b)| {
                            vec![
                                run.name.clone(),
                                replica.to_string(),
                                fixed(Some(i as f64 * width), 3),
                                fixed(Some(f64::from(b.arrivals) / width), 1),
                                fixed(Some(f64::from(b.served) / width), 1),
                                fixed(Some(b.held), 2),
                                fixed(Some(f64::from(b.departures) / width), 1),
                                fixed(
                                    (b.departures > 0).then(|| {
                                        b.sojourn_ns as f64 / 1e9 / f64::from(b.departures)
                                    }),
                                    6,
                                ),
                                b.crashes.to_string(),
                                fixed(Some(b.in_rotation), 2),
                                b.ejections.to_string(),
                            ]
                        })
                    })
            })
        });
        to_csv(std::iter::once(header).chain(rows))
    }
}
