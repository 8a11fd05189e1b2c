//! The API's listening sockets, bound before anything else starts: an `http_addr` that is in use
//! or not this machine's stops the server with one line, before its raft node, actors or banner.
//! The sockets get the options actix would give them (address reuse, a backlog of [`BACKLOG`]).

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};

use anyhow::Context;
use socket2::{Domain, Protocol, Socket, Type};

/// Connections the kernel queues before the server accepts them (actix's default).
pub const BACKLOG: i32 = 2048;

/// Binds the addresses `addr` resolves to (`localhost:7700` may be two): every one that can be
/// bound, as actix would; an error only when none can.
pub fn bind(addr: &str) -> anyhow::Result<Vec<TcpListener>> {
    let resolved: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .with_context(|| format!("cannot listen on http_addr {addr}: it does not resolve"))?
        .collect();
    let mut bound = Vec::with_capacity(resolved.len());
    let mut last_error = None;
    for at in resolved {
        match bind_one(at) {
            Ok(listener) => bound.push(listener),
            Err(e) => last_error = Some(e),
        }
    }
    match (bound.is_empty(), last_error) {
        (false, _) => Ok(bound),
        (true, Some(e)) => Err(e).with_context(|| format!("cannot listen on http_addr {addr}")),
        (true, None) => {
            anyhow::bail!("cannot listen on http_addr {addr}: it resolves to no address")
        }
    }
}

fn bind_one(at: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(at), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.bind(&at.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_in_use_is_one_error_naming_it() {
        let taken = bind("127.0.0.1:0").unwrap();
        let addr = taken[0].local_addr().unwrap().to_string();
        let err = format!("{:#}", bind(&addr).unwrap_err());
        assert!(
            err.starts_with(&format!("cannot listen on http_addr {addr}"))
                && err.contains("in use"),
            "{err}"
        );
    }

    #[test]
    fn a_free_address_listens() {
        let bound = bind("127.0.0.1:0").unwrap();
        let addr = bound[0].local_addr().unwrap();
        assert!(std::net::TcpStream::connect(addr).is_ok());
    }
}
