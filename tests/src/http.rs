//! A small JSON-over-HTTP client for tests, returning status and body.

use std::time::Duration;

use serde_json::Value;

/// Talks to one server's HTTP API.
#[derive(Clone, Debug)]
pub struct Client {
    base: String,
    http: reqwest::Client,
}

impl Client {
    /// A client of the server at `addr` (`host:port`).
    pub fn new(addr: &str) -> Self {
        Self {
            base: format!("http://{addr}"),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(15))
                .build()
                .expect("http client"),
        }
    }

    /// `GET path` → (status, JSON body or Null).
    pub async fn get(&self, path: &str) -> anyhow::Result<(u16, Value)> {
        let resp = self.http.get(format!("{}{path}", self.base)).send().await?;
        Self::decode(resp).await
    }

    /// `POST path` with a JSON body → (status, JSON body or Null).
    pub async fn post(&self, path: &str, body: &Value) -> anyhow::Result<(u16, Value)> {
        let resp = self
            .http
            .post(format!("{}{path}", self.base))
            .json(body)
            .send()
            .await?;
        Self::decode(resp).await
    }

    /// `PUT path` with a JSON body.
    pub async fn put(&self, path: &str, body: &Value) -> anyhow::Result<(u16, Value)> {
        let resp = self
            .http
            .put(format!("{}{path}", self.base))
            .json(body)
            .send()
            .await?;
        Self::decode(resp).await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> anyhow::Result<(u16, Value)> {
        let resp = self
            .http
            .delete(format!("{}{path}", self.base))
            .send()
            .await?;
        Self::decode(resp).await
    }

    /// `POST path` with raw bytes as the body (for malformed-input tests).
    pub async fn post_raw(&self, path: &str, body: &'static str) -> anyhow::Result<(u16, Value)> {
        let resp = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await?;
        Self::decode(resp).await
    }

    async fn decode(resp: reqwest::Response) -> anyhow::Result<(u16, Value)> {
        let status = resp.status().as_u16();
        let bytes = resp.bytes().await?;
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
        };
        Ok((status, body))
    }
}
