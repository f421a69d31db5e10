//! Presets: the default retry behaviour of widely used libraries, each written
//! as the `[retry]` table it amounts to (REFERENCE.md section 8 has the formulas).
//!
//! A strategy (or `[retry]`) that says `preset = "grpc"` starts from that table;
//! its own keys override the preset's, and the preset's override `[retry]`'s.
//! A preset sets what the library decides: the backoff (kind, base, cap,
//! multiplier, jitter), the retry limit, which outcomes are retried, whether
//! Retry-After is honoured, the retry budget (none unless the library has one)
//! and, for the backoff crate, its elapsed-time limit. It leaves to the scenario
//! what the caller decides: the attempt timeout, and any breaker or throttle.
//!
//! Outcomes are mapped to the simulator's: a connection reset or refusal is
//! `reset`/`refused`, a client-side timeout is `timeout`; gRPC's UNAVAILABLE is
//! what gRPC makes of resets, refusals and HTTP 429/502/503/504. A library that
//! retries "every error" retries 400 and 401 too.

use super::duration::DurationValue;
use super::schema::{
    BackoffFile, BudgetFile, DurationOrNone, JitterFile, JitterValue, RetryAfterModeFile,
    RetryFile, RetryLimit,
};
use crate::engine::SimDuration;

/// One library's defaults.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// Name in scenario files and on the command line.
    pub name: &'static str,
    /// The library and the version its defaults were read from.
    pub library: &'static str,
    /// Where the defaults are documented.
    pub source: &'static str,
    /// What the preset approximates or leaves out.
    pub notes: &'static str,
    /// The `[retry]` table the defaults amount to.
    table: fn() -> RetryFile,
}

impl Preset {
    /// The preset's `[retry]` table.
    pub fn table(&self) -> RetryFile {
        (self.table)()
    }
}

/// Every preset, in the order `sim presets` lists them.
pub const PRESETS: [Preset; 23] = [
    Preset {
        name: "got",
        library: "got 14 to 16 (Node.js)",
        source: "https://github.com/sindresorhus/got/blob/main/documentation/7-retry.md",
        notes: "retries GET and the other idempotent methods only; 408, 413, 521, 522 and 524 are not simulated; got gives up when Retry-After exceeds maxRetryAfter (default: the request timeout, none by default)",
        table: got,
    },
    Preset {
        name: "axios-retry",
        library: "axios-retry 4 (Node.js; measured on 4.5.0 with axios 1.21.1), default retryDelay (noDelay)",
        source: "https://github.com/softonic/axios-retry#options",
        notes: "isNetworkOrIdempotentRequestError: network errors, 429 and every 5xx (501 included, not simulated), but not ECONNABORTED, axios's timeout; the default delay waits a Retry-After exactly, with no cap; by default one axios timeout spans all attempts (shouldResetTimeout false), which the scenario's deadline can model",
        table: axios_retry,
    },
    Preset {
        name: "axios-retry-exponential",
        library: "axios-retry 4 (Node.js; measured on 4.5.0 with axios 1.21.1), retryDelay: exponentialDelay",
        source: "https://github.com/softonic/axios-retry#options",
        notes: "exponentialDelay = 2^n * 100 ms plus up to 20%; retries network errors, 429 and 5xx like the default; with a Retry-After it waits max(Retry-After, backoff) * U(1, 1.2), which the simulator approximates as the Retry-After alone",
        table: axios_retry_exponential,
    },
    Preset {
        name: "cockatiel",
        library: "cockatiel 3 and 4 (TypeScript), retry(handleAll, { backoff: new ExponentialBackoff() })",
        source: "https://github.com/connor4312/cockatiel#exponentialbackoff",
        notes: "maxAttempts is unlimited unless set: only the attempt timeout and the scenario's deadline end a request",
        table: cockatiel,
    },
    Preset {
        name: "polly",
        library: "Polly 8 (.NET), RetryStrategyOptions defaults",
        source: "https://www.pollydocs.org/strategies/retry.html",
        notes: "handles every exception but OperationCanceledException; an HttpClient timeout is a TaskCanceledException and is not retried, a Polly timeout strategy's TimeoutRejectedException is (modelled: timeouts retried)",
        table: polly,
    },
    Preset {
        name: "polly-exponential",
        library: "Polly 8 (.NET), BackoffType = Exponential",
        source: "https://www.pollydocs.org/strategies/retry.html",
        notes: "2 s * 2^a, a from 0, no jitter",
        table: polly_exponential,
    },
    Preset {
        name: "polly-jitter",
        library: "Polly 8 (.NET), BackoffType = Exponential, UseJitter = true",
        source: "https://www.pollydocs.org/strategies/retry.html",
        notes: "DecorrelatedJitterBackoffV2 (Polly.Contrib.WaitAndRetry's formula) scaled by Delay = 2 s: its median first delay is f(0.5) / 1.4 * 2 s = 1.79 s",
        table: polly_jitter,
    },
    Preset {
        name: "grpc",
        library: "gRPC retry policy (gRFC A6; grpcio 1.85), the proposal's example service config",
        source: "https://github.com/grpc/proposal/blob/master/A6-client-retries.md",
        notes: "gRPC does not retry without a service config; this is A6's example (maxAttempts 4, 0.1 s, x2, max 1 s, UNAVAILABLE, retryThrottling 10/0.1) with the current +-20% jitter; server pushback is modelled as Retry-After",
        table: grpc,
    },
    Preset {
        name: "grpc-full-jitter",
        library: "gRPC retry policy, the historical form (gRFC A6 as first published; older grpc releases)",
        source: "https://github.com/grpc/proposal/blob/master/A6-client-retries.md",
        notes: "historical: random(0, min(initial * multiplier^(n-1), max)), A6's first text; grpcio 1.85.3 jitters by +-20% instead (the grpc preset); otherwise as grpc",
        table: grpc_full_jitter,
    },
    Preset {
        name: "grpc-connection",
        library: "gRPC connection backoff",
        source: "https://github.com/grpc/grpc/blob/master/doc/connection-backoff.md",
        notes: "reconnection, not RPC retry: 1 s, x1.6, +-20%, max 120 s, for ever; the 20 s minimum connect timeout is the scenario's attempt timeout; the first wait is jittered too",
        table: grpc_connection,
    },
    Preset {
        name: "aws-sdk-standard",
        library: "AWS SDK for Python, standard retry mode (botocore 1.44 and later, where it is the default)",
        source: "https://github.com/boto/botocore/blob/develop/botocore/retries/standard.py",
        notes: "3 attempts, U(0, 1) * min(b * 2^(n-1), 20 s) with b = 1 s after a throttling error (429) and 50 ms after any other; retry quota 500: 14 per retry (timeouts too), 5 per retry after a throttling error, 1 back per first-try success; x-amz-retry-after (ms) raises the delay to at most the backoff's + 5 s, the standard Retry-After is ignored (the simulator's one hint stands for x-amz-retry-after)",
        table: aws_sdk_standard,
    },
    Preset {
        name: "aws-sdk-standard-pre-1.44",
        library: "AWS SDK for Python, standard retry mode before botocore 1.44 (opt-in there: legacy was the default)",
        source: "https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html",
        notes: "3 attempts, U(0, 1) * min(2^(n-1) s, 20 s), retry quota 500 (5 per retry, 10 per timeout retry, 1 back per success); no retry-after header honoured; a 429 is retried when its body carries a throttling code, as AWS's do (a bare 429 is not)",
        table: aws_sdk_standard_pre_1_44,
    },
    Preset {
        name: "aws-sdk-legacy",
        library: "AWS SDK for Python, legacy retry mode (botocore's default before 1.44)",
        source: "https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html",
        notes: "5 attempts, U(0, 1) * 2^(n-1) s without a cap, no quota (DynamoDB's 10 attempts of 50 ms * 2^(n-1) are not modelled)",
        table: aws_sdk_legacy,
    },
    Preset {
        name: "backoff-crate",
        library: "backoff 0.4 (Rust), ExponentialBackoff::default()",
        source: "https://docs.rs/backoff/0.4.0/backoff/default/index.html",
        notes: "retries every error the operation calls transient (`?` makes errors transient); stops 15 minutes after the first attempt",
        table: backoff_crate,
    },
    Preset {
        name: "backon",
        library: "backon 1 (Rust), ExponentialBuilder::default()",
        source: "https://docs.rs/backon/latest/backon/struct.ExponentialBuilder.html",
        notes: "retries every error unless `.when()` says otherwise",
        table: backon,
    },
    Preset {
        name: "tokio-retry",
        library: "tokio-retry 0.3 (Rust), the README's ExponentialBackoff::from_millis(10).map(jitter).take(3)",
        source: "https://docs.rs/tokio-retry/0.3.0/tokio_retry/",
        notes: "there is no default schedule: this is the README's; delays are 10^n ms times U(0, 1]; every error is retried",
        table: tokio_retry,
    },
    Preset {
        name: "resilience4j",
        library: "resilience4j 2 (Java), RetryConfig.ofDefaults()",
        source: "https://resilience4j.readme.io/docs/retry",
        notes: "3 attempts, 500 ms apart, every exception retried",
        table: resilience4j,
    },
    Preset {
        name: "go-retryablehttp",
        library: "go-retryablehttp 0.7 (Go, HashiCorp), NewClient() defaults",
        source: "https://github.com/hashicorp/go-retryablehttp/blob/main/client.go",
        notes: "RetryMax 4, DefaultBackoff min(1 s * 2^n, 30 s) for n from 0, no jitter; DefaultRetryPolicy: connection errors, 429 and every 5xx but 501; a Retry-After on a 429 or 503 is the delay, uncapped",
        table: go_retryablehttp,
    },
    Preset {
        name: "urllib3",
        library: "urllib3 2 (Python), Retry.DEFAULT = Retry(3)",
        source: "https://urllib3.readthedocs.io/en/stable/reference/urllib3.util.html#urllib3.util.Retry",
        notes: "3 retries of connection and read errors on idempotent methods, backoff_factor 0 (no delay); no status is retried unless status_forcelist names it, except a 413, 429 or 503 that carries a Retry-After, which is retried after it (retry_on_hinted; 413 is not simulated); requests' adapters default to no retries at all",
        table: urllib3,
    },
    Preset {
        name: "tenacity",
        library: "tenacity 9 (Python), @retry with no arguments",
        source: "https://tenacity.readthedocs.io/en/latest/",
        notes: "stop_never, wait_none, retry_if_exception_type(): every exception retried at once, for ever; only the attempt timeout and the scenario's deadline end a request",
        table: tenacity,
    },
    Preset {
        name: "tenacity-random-exponential",
        library: "tenacity 9 (Python), @retry(wait=wait_random_exponential(multiplier=1, max=60)), its documentation's example",
        source: "https://tenacity.readthedocs.io/en/latest/api.html#tenacity.wait.wait_random_exponential",
        notes: "U(0, min(2^(n-1) s, 60 s)), the AWS article's full jitter; no stop: retried for ever",
        table: tenacity_random_exponential,
    },
    Preset {
        name: "envoy",
        library: "Envoy 1.3x router retry policy, with the cluster's default circuit breaker",
        source: "https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/http/http_routing#retry-semantics",
        notes: "num_retries 1, base 25 ms, max 250 ms, retry_on 5xx,reset,connect-failure; the default circuit breaker's max_retries 3: at most 3 retries in progress across all clients (a retry counts while its attempt is out, not while it waits out its back-off, as Envoy counts: envoyproxy/envoy#30205)",
        table: envoy,
    },
    Preset {
        name: "envoy-retry-budget",
        library: "Envoy 1.3x router retry policy with a retry budget (retry_budget {} in the cluster's circuit breakers)",
        source: "https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/cluster/v3/circuit_breaker.proto",
        notes: "as envoy, with the budget's defaults instead of max_retries: retries in progress at most budget_percent 20% of the requests in progress, and at least min_retry_concurrency 3; requests in progress are the logical requests, backoff included; a retry counts only while its attempt is out, not while it waits out its back-off, as Envoy counts (envoyproxy/envoy#30205)",
        table: envoy_retry_budget,
    },
];

/// The preset named `name`.
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Every outcome a library that retries "every error" retries.
const EVERY_FAILURE: &[&str] = &[
    "timeout", "reset", "refused", "400", "401", "409", "429", "500", "502", "503", "504",
];

/// Network errors, timeouts and the transient statuses.
const TRANSIENT: &[&str] = &[
    "timeout", "reset", "refused", "429", "500", "502", "503", "504",
];

fn ms(v: u64) -> Option<DurationValue> {
    Some(DurationValue(SimDuration::from_millis(v)))
}

fn outcomes(names: &[&str]) -> Option<Vec<String>> {
    Some(names.iter().map(|n| (*n).to_owned()).collect())
}

/// The keys every preset sets, so nothing of `[retry]` leaks into them: the
/// backoff, the limit, the outcomes, Retry-After (off) and the budget (none).
fn table(
    backoff: BackoffFile,
    base: u64,
    cap: Option<u64>,
    max_retries: u32,
    retry_on: &[&str],
) -> RetryFile {
    RetryFile {
        backoff: Some(backoff),
        base: ms(base),
        cap: Some(DurationValue(
            cap.map_or(SimDuration::MAX, SimDuration::from_millis),
        )),
        multiplier: Some(2.0),
        first_exponent: Some(0),
        jitter: Some(JitterValue::None),
        max_retries: Some(RetryLimit(max_retries)),
        retry_on: outcomes(retry_on),
        retry_on_hinted: outcomes(&[]),
        use_retry_after: Some(false),
        retry_after_max: Some(DurationValue(SimDuration::MAX)),
        retry_after_mode: Some(RetryAfterModeFile::Replace),
        retry_after_slack: Some(DurationOrNone::None),
        throttling_base: Some(DurationOrNone::None),
        budget: Some(BudgetFile::None),
        ..RetryFile::default()
    }
}

fn scaled(low: f64, high: f64) -> Option<JitterValue> {
    Some(JitterValue::Table(JitterFile {
        add: None,
        low: Some(low),
        high: Some(high),
    }))
}

const UNLIMITED: u32 = u32::MAX;

/// got 14: `retry.limit` 2; delay `1000 * 2^(n-1) + noise`, noise U(0, 100) ms,
/// `backoffLimit` Infinity; statusCodes 408 413 429 500 502 503 504 521 522 524,
/// errorCodes ETIMEDOUT ECONNRESET ECONNREFUSED EPIPE ENOTFOUND ENETUNREACH
/// EAI_AGAIN; Retry-After honoured (got's documentation/7-retry.md).
fn got() -> RetryFile {
    RetryFile {
        jitter: Some(JitterValue::Table(JitterFile {
            add: ms(100),
            low: None,
            high: None,
        })),
        use_retry_after: Some(true),
        ..table(BackoffFile::Exponential, 1000, None, 2, TRANSIENT)
    }
}

/// axios-retry 4: `retries` 3, `retryDelay` noDelay (0), `retryCondition`
/// isNetworkOrIdempotentRequestError: no response (but not ECONNABORTED, the
/// axios timeout), a 429 or a 5xx, on idempotent methods (its README's
/// options; the 429 and the uncapped Retry-After as measured on 4.5.0 with
/// axios 1.21.1).
fn axios_retry() -> RetryFile {
    RetryFile {
        // The default delay is a Retry-After when there is one, exactly.
        use_retry_after: Some(true),
        ..table(
            BackoffFile::None,
            0,
            None,
            3,
            &["reset", "refused", "429", "500", "502", "503", "504"],
        )
    }
}

/// axios-retry 4 with `exponentialDelay`: `2^n * 100` ms plus U(0, 20%) of it,
/// n from 1: 200, 400, 800 ms before jitter; a Retry-After raises `2^n * 100`
/// before the 20% is added (`Math.max(calculatedDelay, retryAfter)`).
fn axios_retry_exponential() -> RetryFile {
    RetryFile {
        jitter: scaled(1.0, 1.2),
        use_retry_after: Some(true),
        retry_after_mode: Some(RetryAfterModeFile::BeforeJitter),
        ..table(
            BackoffFile::Exponential,
            200,
            None,
            3,
            &["reset", "refused", "429", "500", "502", "503", "504"],
        )
    }
}

/// cockatiel 3: `ExponentialBackoff` defaults `initialDelay` 128 ms, `maxDelay`
/// 30 s, `exponent` 2, generator decorrelatedJitterGenerator (Polly's V2);
/// `maxAttempts` Infinity; `handleAll` (its README).
fn cockatiel() -> RetryFile {
    table(
        BackoffFile::DecorrelatedJitterV2,
        128,
        Some(30_000),
        UNLIMITED,
        EVERY_FAILURE,
    )
}

/// Polly 8 `RetryStrategyOptions`: `MaxRetryAttempts` 3, `BackoffType`
/// Constant, `Delay` 2 s, `ShouldHandle` every exception but cancellation
/// (pollydocs.org, strategies/retry).
fn polly() -> RetryFile {
    table(BackoffFile::Constant, 2000, None, 3, EVERY_FAILURE)
}

/// Polly 8 with `BackoffType = Exponential`: `Delay * 2^a`, a from 0.
fn polly_exponential() -> RetryFile {
    table(BackoffFile::Exponential, 2000, None, 3, EVERY_FAILURE)
}

/// Polly 8 with `BackoffType = Exponential, UseJitter = true`: Polly's
/// DecorrelatedJitterBackoffV2 with `Delay` 2 s as the median first delay.
fn polly_jitter() -> RetryFile {
    table(
        BackoffFile::DecorrelatedJitterV2,
        2000,
        None,
        3,
        EVERY_FAILURE,
    )
}

/// gRFC A6's example: `maxAttempts` 4, `initialBackoff` 0.1 s, `maxBackoff`
/// 1 s, `backoffMultiplier` 2, `retryableStatusCodes` [UNAVAILABLE],
/// `retryThrottling` { maxTokens 10, tokenRatio 0.1 }; each delay
/// `min(max, initial * mult^(n-1))` times U(0.8, 1.2).
fn grpc() -> RetryFile {
    RetryFile {
        backoff: Some(BackoffFile::Exponential),
        jitter: scaled(0.8, 1.2),
        ..grpc_full_jitter()
    }
}

/// gRFC A6 as first published: `random(0, min(initial * mult^(n-1), max))`.
fn grpc_full_jitter() -> RetryFile {
    RetryFile {
        use_retry_after: Some(true),
        budget: Some(BudgetFile::TokenBucket {
            max_tokens: Some(10.0),
            token_ratio: Some(0.1),
        }),
        ..table(
            BackoffFile::FullJitter,
            100,
            Some(1000),
            3,
            &["reset", "refused", "429", "502", "503", "504"],
        )
    }
}

/// gRPC's connection backoff (doc/connection-backoff.md): INITIAL_BACKOFF 1 s,
/// MULTIPLIER 1.6, JITTER 0.2, MAX_BACKOFF 120 s, retried for ever.
fn grpc_connection() -> RetryFile {
    RetryFile {
        multiplier: Some(1.6),
        jitter: scaled(0.8, 1.2),
        ..table(
            BackoffFile::Exponential,
            1000,
            Some(120_000),
            UNLIMITED,
            &["timeout", "reset", "refused"],
        )
    }
}

/// botocore 1.44's standard mode (`botocore/retries/standard.py`): 3 attempts,
/// `random(0, 1) * min(b * 2^(n-1), 20 s)` with b = 1 s after a throttling
/// error and 50 ms after any other; a retry quota of 500, 14 per retry (a
/// timeout too), 5 per retry after a throttling error, 1 back per first-try
/// success; `x-amz-retry-after` (ms) raises the delay to at most `t + 5 s`.
fn aws_sdk_standard() -> RetryFile {
    RetryFile {
        budget: Some(BudgetFile::AwsQuota {
            capacity: Some(500),
            retry_cost: Some(14),
            timeout_cost: Some(14),
            throttling_cost: Some(5),
            success_bonus: Some(1),
        }),
        use_retry_after: Some(true),
        retry_after_mode: Some(RetryAfterModeFile::AtLeast),
        retry_after_slack: Some(DurationOrNone::After(DurationValue(
            SimDuration::from_secs(5),
        ))),
        throttling_base: Some(DurationOrNone::After(DurationValue(
            SimDuration::from_secs(1),
        ))),
        ..table(BackoffFile::FullJitter, 50, Some(20_000), 2, TRANSIENT)
    }
}

/// botocore's standard mode before 1.44 (opt-in there; legacy was the default):
/// 3 attempts, `random(0, 1) * min(2^(n-1) s, 20 s)`, a retry quota of 500
/// tokens, 5 per retry, 10 per retry after a timeout, 1 back per success (AWS
/// SDKs and Tools reference guide, "Retry behavior"; botocore 1.40.76's
/// `retries/standard.py`).
fn aws_sdk_standard_pre_1_44() -> RetryFile {
    RetryFile {
        budget: Some(BudgetFile::AwsQuota {
            capacity: Some(500),
            retry_cost: Some(5),
            timeout_cost: Some(10),
            throttling_cost: Some(5),
            success_bonus: Some(1),
        }),
        ..table(BackoffFile::FullJitter, 1000, Some(20_000), 2, TRANSIENT)
    }
}

/// AWS SDKs' legacy mode: 5 attempts, `random(0, 1) * 2^(n-1)` s, no cap, no quota.
fn aws_sdk_legacy() -> RetryFile {
    table(BackoffFile::FullJitter, 1000, None, 4, TRANSIENT)
}

/// backoff 0.4 `ExponentialBackoff::default()`: initial interval 500 ms,
/// randomization factor 0.5 (each delay uniform in [0.5 c, 1.5 c]), multiplier
/// 1.5, max interval 60 s, max elapsed time 15 minutes (`backoff::default`).
fn backoff_crate() -> RetryFile {
    RetryFile {
        multiplier: Some(1.5),
        jitter: scaled(0.5, 1.5),
        deadline: Some(DurationOrNone::After(DurationValue(
            SimDuration::from_secs(15 * 60),
        ))),
        ..table(
            BackoffFile::Exponential,
            500,
            Some(60_000),
            UNLIMITED,
            EVERY_FAILURE,
        )
    }
}

/// backon 1 `ExponentialBuilder::default()`: min delay 1 s, factor 2, max delay
/// 60 s, max times 3, jitter off.
fn backon() -> RetryFile {
    table(
        BackoffFile::Exponential,
        1000,
        Some(60_000),
        3,
        EVERY_FAILURE,
    )
}

/// tokio-retry 0.3's README: `ExponentialBackoff::from_millis(10).map(jitter)
/// .take(3)`: delays 10^n ms, each times U(0, 1] (`jitter`), 3 retries.
fn tokio_retry() -> RetryFile {
    RetryFile {
        multiplier: Some(10.0),
        ..table(BackoffFile::FullJitter, 10, None, 3, EVERY_FAILURE)
    }
}

/// resilience4j 2 `RetryConfig.ofDefaults()`: `maxAttempts` 3, `waitDuration`
/// 500 ms, every exception retried.
fn resilience4j() -> RetryFile {
    table(BackoffFile::Constant, 500, None, 2, EVERY_FAILURE)
}

/// go-retryablehttp 0.7 `NewClient()`: `RetryMax` 4, `RetryWaitMin` 1 s,
/// `RetryWaitMax` 30 s, `DefaultBackoff` `min * 2^attemptNum` (attemptNum
/// from 0) capped at max, a Retry-After on 429 and 503 honoured;
/// `DefaultRetryPolicy` retries errors, 429, 0 and 5xx but 501.
fn go_retryablehttp() -> RetryFile {
    RetryFile {
        use_retry_after: Some(true),
        ..table(BackoffFile::Exponential, 1000, Some(30_000), 4, TRANSIENT)
    }
}

/// urllib3 2 `Retry.DEFAULT`: `Retry(3)`, `backoff_factor` 0, no
/// `status_forcelist`: connection errors (reset, refused) and read errors
/// (timeouts) retried at once; a 413, 429 or 503 only when it carries a
/// Retry-After (`Retry.is_retry`), after that long.
fn urllib3() -> RetryFile {
    RetryFile {
        use_retry_after: Some(true),
        retry_on_hinted: outcomes(&["429", "503"]),
        ..table(
            BackoffFile::None,
            0,
            None,
            3,
            &["timeout", "reset", "refused"],
        )
    }
}

/// tenacity 9 `@retry`: `stop_never`, `wait_none()`, every exception.
fn tenacity() -> RetryFile {
    table(BackoffFile::None, 0, None, UNLIMITED, EVERY_FAILURE)
}

/// tenacity 9 `wait_random_exponential(multiplier=1, max=60)`:
/// `uniform(0, min(1 s * 2^(n-1), 60 s))`, no stop.
fn tenacity_random_exponential() -> RetryFile {
    table(
        BackoffFile::FullJitter,
        1000,
        Some(60_000),
        UNLIMITED,
        EVERY_FAILURE,
    )
}

/// Envoy's route retry policy: `num_retries` 1, `base_interval` 25 ms,
/// `max_interval` 10 times it (250 ms), full jitter over `(2^n - 1) * base`;
/// retry_on "5xx,reset,connect-failure" (a per-try timeout counts as 5xx); the
/// cluster circuit breaker's default `max_retries` 3, which counts a retry
/// only while its attempt is out (envoyproxy/envoy#30205).
fn envoy() -> RetryFile {
    RetryFile {
        budget: Some(BudgetFile::Concurrency {
            percent: Some(0.0),
            min_concurrency: Some(3),
            // Envoy counts a retry only while its attempt is out, not while
            // it waits out its back-off (envoyproxy/envoy#30205).
            count_backoff: Some(false),
        }),
        ..table(
            BackoffFile::Envoy,
            25,
            Some(250),
            1,
            &["timeout", "reset", "refused", "500", "502", "503", "504"],
        )
    }
}

/// Envoy with `retry_budget {}`: `budget_percent` 20%, `min_retry_concurrency`
/// 3 (circuit_breaker.proto), replacing `max_retries`.
fn envoy_retry_budget() -> RetryFile {
    RetryFile {
        budget: Some(BudgetFile::Concurrency {
            percent: Some(0.2),
            min_concurrency: Some(3),
            // Envoy counts a retry only while its attempt is out, not while
            // it waits out its back-off (envoyproxy/envoy#30205).
            count_backoff: Some(false),
        }),
        ..envoy()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retry::delays::delay_distribution;
    use crate::retry::{BudgetConfig, Outcome};
    use crate::scenario::preset_strategy;

    /// Each preset's documented delays before the first retries, in ms, as
    /// (lowest, highest): equal ends for a schedule without randomness.
    fn documented(name: &str) -> (u32, &'static [(f64, f64)]) {
        match name {
            "got" => (2, &[(1000.0, 1100.0), (2000.0, 2100.0)]),
            "axios-retry" => (3, &[(0.0, 0.0), (0.0, 0.0), (0.0, 0.0)]),
            "axios-retry-exponential" => (3, &[(200.0, 240.0), (400.0, 480.0), (800.0, 960.0)]),
            // V2: f(t) / 1.4 * base with t in [0, 1): up to 2 tanh(2) / 1.4 = 1.377 bases.
            "cockatiel" => (u32::MAX, &[(0.0, 176.3)]),
            "polly" => (3, &[(2000.0, 2000.0), (2000.0, 2000.0), (2000.0, 2000.0)]),
            "polly-exponential" => (3, &[(2000.0, 2000.0), (4000.0, 4000.0), (8000.0, 8000.0)]),
            "polly-jitter" => (3, &[(0.0, 2754.4)]),
            "grpc" => (3, &[(80.0, 120.0), (160.0, 240.0), (320.0, 480.0)]),
            "grpc-full-jitter" => (3, &[(0.0, 100.0), (0.0, 200.0), (0.0, 400.0)]),
            "grpc-connection" => (
                u32::MAX,
                &[
                    (800.0, 1200.0),
                    (1280.0, 1920.0),
                    (2048.0, 3072.0),
                    (3276.8, 4915.2),
                ],
            ),
            "aws-sdk-standard" => (2, &[(0.0, 50.0), (0.0, 100.0)]),
            "aws-sdk-standard-pre-1.44" => (2, &[(0.0, 1000.0), (0.0, 2000.0)]),
            "go-retryablehttp" => (
                4,
                &[
                    (1000.0, 1000.0),
                    (2000.0, 2000.0),
                    (4000.0, 4000.0),
                    (8000.0, 8000.0),
                ],
            ),
            "urllib3" => (3, &[(0.0, 0.0), (0.0, 0.0), (0.0, 0.0)]),
            "tenacity" => (u32::MAX, &[(0.0, 0.0), (0.0, 0.0)]),
            "tenacity-random-exponential" => {
                (u32::MAX, &[(0.0, 1000.0), (0.0, 2000.0), (0.0, 4000.0)])
            }
            "aws-sdk-legacy" => (
                4,
                &[(0.0, 1000.0), (0.0, 2000.0), (0.0, 4000.0), (0.0, 8000.0)],
            ),
            "backoff-crate" => (
                u32::MAX,
                &[(250.0, 750.0), (375.0, 1125.0), (562.5, 1687.5)],
            ),
            "backon" => (3, &[(1000.0, 1000.0), (2000.0, 2000.0), (4000.0, 4000.0)]),
            "tokio-retry" => (3, &[(0.0, 10.0), (0.0, 100.0), (0.0, 1000.0)]),
            "resilience4j" => (2, &[(500.0, 500.0), (500.0, 500.0)]),
            "envoy" | "envoy-retry-budget" => (1, &[(0.0, 25.0)]),
            other => panic!("no documented sequence for preset {other}"),
        }
    }

    #[test]
    fn every_preset_reproduces_its_documented_delays_and_limit() {
        for p in &PRESETS {
            let s = preset_strategy(p).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let (limit, delays) = documented(p.name);
            assert_eq!(s.policy.max_retries, limit, "{}", p.name);
            let table = delay_distribution(&s.backoff, delays.len() as u32, 20_000, 7);
            for (r, &(lo, hi)) in table.iter().zip(delays) {
                let (min, max) = (r.quantiles[0] * 1e3, r.quantiles[6] * 1e3);
                // Rounding to whole nanoseconds moves a delay by at most 1e-6 ms.
                let eps = 1e-6;
                assert!(
                    min >= lo - eps && max <= hi + eps,
                    "{} retry {}: [{min}, {max}] outside [{lo}, {hi}]",
                    p.name,
                    r.retry
                );
                // 20 000 draws come within 1% of each end of a uniform range
                // (the chance they miss is 0.99^20000, about 1e-87).
                let near = 0.01 * (hi - lo) + eps;
                assert!(
                    min <= lo + near && max >= hi - near,
                    "{} retry {}: [{min}, {max}] does not fill [{lo}, {hi}]",
                    p.name,
                    r.retry
                );
            }
        }
    }

    #[test]
    fn presets_classify_as_their_libraries_do() {
        let retries = |name: &str, o: Outcome| {
            let s = preset_strategy(find(name).expect("a preset")).expect("valid");
            s.policy.retry_on.contains(o)
        };
        // axios-retry never retries its own timeout (ECONNABORTED); gRPC does not
        // retry DEADLINE_EXCEEDED; got and the AWS SDKs do.
        for (name, timeout) in [
            ("axios-retry", false),
            ("grpc", false),
            ("got", true),
            ("aws-sdk-standard", true),
        ] {
            assert_eq!(retries(name, Outcome::Timeout), timeout, "{name}");
        }
        // "Every error" libraries retry even a 400; the HTTP clients do not.
        for (name, bad) in [
            ("polly", true),
            ("backon", true),
            ("got", false),
            ("envoy", false),
        ] {
            assert_eq!(retries(name, Outcome::Status400), bad, "{name}");
        }
        // Measured on axios-retry 4.5.0 (axios 1.21.1): its default condition
        // retries 429 as well as every 5xx.
        assert!(retries("axios-retry", Outcome::Status429));
        assert!(retries("axios-retry-exponential", Outcome::Status429));
    }

    #[test]
    fn budgets_and_limits_are_the_libraries() {
        let s = |name: &str| preset_strategy(find(name).expect("a preset")).expect("valid");
        // botocore 1.44's RetryQuotaChecker: 14 per retry, 5 after throttling.
        assert!(matches!(
            s("aws-sdk-standard").budget,
            Some(BudgetConfig::AwsQuota {
                capacity: 500,
                retry_cost: 14,
                timeout_cost: 14,
                throttling_cost: 5,
                success_bonus: 1
            })
        ));
        assert_eq!(
            s("aws-sdk-standard").policy.throttling_base,
            Some(SimDuration::from_secs(1))
        );
        assert!(matches!(
            s("aws-sdk-standard-pre-1.44").budget,
            Some(BudgetConfig::AwsQuota {
                capacity: 500,
                retry_cost: 5,
                timeout_cost: 10,
                throttling_cost: 5,
                success_bonus: 1
            })
        ));
        assert!(matches!(
            s("grpc").budget,
            Some(BudgetConfig::TokenBucket { .. })
        ));
        assert!(s("aws-sdk-legacy").budget.is_none());
        assert_eq!(
            s("backoff-crate").policy.deadline,
            Some(SimDuration::from_secs(900))
        );
        assert!(s("got").policy.use_retry_after && !s("polly").policy.use_retry_after);
    }

    #[test]
    fn preset_names_are_unique() {
        for (i, p) in PRESETS.iter().enumerate() {
            assert!(PRESETS[..i].iter().all(|q| q.name != p.name), "{}", p.name);
        }
    }
}
