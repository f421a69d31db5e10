//! Drives one Rust retry crate, configured as its preset says, against the
//! failing server. Usage: conformance-driver PRESET [sequential] < jobs, where
//! each line of jobs is "URL TIMEOUT_MS START_MS" (the job starts START_MS after
//! the driver, so concurrent trials do not fail and retry in lockstep); prints
//! one JSON line per job.
//!
//! Each attempt is a plain HTTP/1.1 GET on a new connection; any error, a
//! timeout or a status of 400 or more fails the attempt, as these crates leave
//! classification to the caller ("every error retried").

use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn get(url: &str, timeout: Duration) -> Result<(), String> {
    let rest = url.strip_prefix("http://").ok_or("not http")?;
    let (host, path) = rest.split_once('/').ok_or("no path")?;
    let mut s = TcpStream::connect(host).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head).map_err(|e| e.to_string())?;
    let status: u16 = std::str::from_utf8(&head[9..12])
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or("bad status line")?;
    if status >= 400 {
        return Err(format!("status {status}"));
    }
    Ok(())
}

fn call(preset: &str, url: &str, timeout: Duration) -> Result<(), String> {
    match preset {
        "backoff-crate" => {
            let op = || get(url, timeout).map_err(backoff::Error::transient);
            backoff::retry(backoff::ExponentialBackoff::default(), op).map_err(|e| format!("{e:?}"))
        }
        "backon" => {
            use backon::BlockingRetryable;
            (|| get(url, timeout))
                .retry(backon::ExponentialBuilder::default())
                .call()
        }
        "tokio-retry" => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async {
                use tokio_retry::strategy::{jitter, ExponentialBackoff};
                // The crate's README: from_millis(10).map(jitter).take(3).
                let strategy = ExponentialBackoff::from_millis(10).map(jitter).take(3);
                tokio_retry::Retry::spawn(strategy, || async {
                    let (u, t) = (url.to_string(), timeout);
                    tokio::task::spawn_blocking(move || get(&u, t))
                        .await
                        .map_err(|e| e.to_string())?
                })
                .await
            })
        }
        other => Err(format!("no Rust driver for {other}")),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let preset = args[1].clone();
    let sequential = args.get(2).is_some_and(|a| a == "sequential");
    let jobs: Vec<(String, u64, u64)> = std::io::stdin()
        .lock()
        .lines()
        .map_while(Result::ok)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = |i: usize| f.get(i).map_or(0, |v| v.parse().expect("a number of ms"));
            (f[0].to_string(), n(1), n(2))
        })
        .collect();
    let run = |(url, ms, start): (String, u64, u64)| {
        if !sequential {
            std::thread::sleep(Duration::from_millis(start));
        }
        let r = call(&preset, &url, Duration::from_millis(ms));
        match r {
            Ok(()) => format!("{{\"url\":\"{url}\",\"ok\":true}}"),
            Err(e) => format!("{{\"url\":\"{url}\",\"ok\":false,\"error\":{:?}}}", e),
        }
    };
    let lines: Vec<String> = if sequential {
        jobs.into_iter().map(run).collect()
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = jobs.into_iter().map(|j| s.spawn(|| run(j))).collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a job"))
                .collect()
        })
    };
    for l in lines {
        println!("{l}");
    }
}
