//! The metrics listener: Prometheus's text format over HTTP/1.1, from the moment the
//! recorder is installed until the server stops.

use std::convert::Infallible;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tonic::codegen::http;

use super::layer::CallMetricHandles;
use super::names::{register_metrics, CALL_DURATION_SECONDS};

/// Latency buckets, in seconds: from 10 µs to 10 s.
const BUCKETS: [f64; 13] = [
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.01, 0.1, 1.0, 5.0,
    10.0,
];

/// How long a metrics connection may take to send a request's headers.
const SCRAPE_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How often the recorder's upkeep runs (drains histogram buffers), as the exporter's
/// own listener would.
const UPKEEP: Duration = Duration::from_secs(5);

/// The metrics listeners and the recorder's upkeep, running until this is dropped:
/// then every listener is closed and every scrape connection ended.
#[derive(Debug)]
pub(crate) struct MetricsListener {
    tasks: JoinSet<()>,
}

/// Stops the listeners and the upkeep.
impl Drop for MetricsListener {
    fn drop(&mut self) {
        self.tasks.abort_all();
    }
}

/// Installs the metrics recorder and serves the metrics in Prometheus's text format over
/// HTTP/1.1 on every one of `listeners` (any path) from now on. The caller binds the
/// listeners, so that it knows the addresses actually bound (port 0 included).
///
/// The listeners are served until the returned [`MetricsListener`] is dropped (the
/// recorder stays installed: calls are still counted).
pub(crate) fn serve_metrics(listeners: Vec<TcpListener>) -> Result<MetricsListener, BuildError> {
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(CALL_DURATION_SECONDS.into()), &BUCKETS)?
        .install_recorder()?;
    register_metrics();
    super::games::install();
    super::connections::install();
    CallMetricHandles::install();
    let mut tasks = JoinSet::new();
    let upkeep = handle.clone();
    tasks.spawn(async move {
        let mut every = tokio::time::interval(UPKEEP);
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    for listener in listeners {
        tasks.spawn(accept_scrapes(listener, handle.clone()));
    }
    Ok(MetricsListener { tasks })
}

/// Answers every scrape on `listener` with the metrics `handle` renders. The
/// connections are tasks of this one: they end when it is aborted.
async fn accept_scrapes(listener: TcpListener, handle: PrometheusHandle) {
    let mut connections = JoinSet::new();
    loop {
        // Finished connections are reaped as new ones come.
        while connections.try_join_next().is_some() {}
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of file descriptors, most likely: wait rather than spin.
                tracing::warn!(%error, "metrics: cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let handle = handle.clone();
        connections.spawn(async move {
            let scrape = service_fn(move |_request| {
                let text = handle.render();
                async move {
                    let mut response = hyper::Response::new(Full::<Bytes>::from(text));
                    response.headers_mut().insert(
                        http::header::CONTENT_TYPE,
                        http::HeaderValue::from_static("text/plain; version=0.0.4"),
                    );
                    Ok::<_, Infallible>(response)
                }
            });
            // A connection that sends no request headers for this long (a new one, or an
            // idle one between scrapes) is closed, so silent connections cannot pile up.
            if let Err(error) = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(SCRAPE_HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), scrape)
                .await
            {
                tracing::debug!(%error, "metrics: connection ended with an error");
            }
        });
    }
}
