//! The relay attack on the servers' link, reproduced: an attacker without the cluster secret sits
//! between a real client and a real server. It can pass bytes through unchanged (a transparent
//! pipe that reads nothing), but it cannot reflect a server's dial back to that server, replay a
//! handshake into a session of its own, inject or replay a frame, or alter one byte without the
//! session dying. Also: a wrong secret, a server that is not the one dialed, and a member
//! speaking for another id are refused.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use convoy_raft::network::client::{Network, NetworkConfig, TransportError};
use convoy_raft::network::frame::{read_frame, write_frame};
use convoy_raft::network::noise::{self, AuthError, MAX_HANDSHAKE_FRAME};
use convoy_raft::network::server::ServerConfig;
use convoy_raft::network::{ClientRequest, RpcRequest, RpcResponse};
use convoy_raft::types::{NodeId, TypeConfig};
use openraft::raft::VoteRequest;
use openraft::type_config::alias::VoteOf;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A payload no byte of which may appear on the wire in the clear.
const PAYLOAD: &[u8] = b"CreateResource: attacker-owned rollout target";

/// Listens on loopback; for each connection, dials `upstream` and runs `script` on
/// `(client, upstream)`. Returns the relay's address.
async fn relay<F, Fut>(upstream: String, script: F) -> String
where
    F: Fn(TcpStream, TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            if let Ok(server) = TcpStream::connect(&upstream).await {
                tokio::spawn(script(client, server));
            }
        }
    });
    addr
}

/// Copies one handshake message (a plain frame) from `from` to `to` and returns it.
async fn pass_handshake_message(from: &mut TcpStream, to: &mut TcpStream) -> Vec<u8> {
    let message: Vec<u8> = read_frame(from, MAX_HANDSHAKE_FRAME).await.unwrap();
    write_frame(to, &message).await.unwrap();
    message
}

/// Reads one sealed record (2-byte length, then the ciphertext) off `from`, whole.
async fn try_take_record(from: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut header = [0u8; 2];
    from.read_exact(&mut header).await?;
    let mut record = header.to_vec();
    record.resize(2 + usize::from(u16::from_be_bytes(header)), 0);
    from.read_exact(&mut record[2..]).await?;
    Ok(record)
}

/// [`try_take_record`] for a stream that must deliver one.
async fn take_record(from: &mut TcpStream) -> Vec<u8> {
    try_take_record(from).await.unwrap()
}

/// Passes the whole handshake (message 1, message 2, the client's confirmation) through.
async fn pass_handshake(client: &mut TcpStream, server: &mut TcpStream) {
    pass_handshake_message(client, server).await;
    pass_handshake_message(server, client).await;
    let confirm = take_record(client).await;
    server.write_all(&confirm).await.unwrap();
}

/// True when the server closes `stream` within a few seconds (EOF or reset, nothing sent).
async fn server_closes(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    matches!(
        tokio::time::timeout(Duration::from_secs(3), stream.read(&mut buf)).await,
        Ok(Ok(0) | Err(_))
    )
}

#[tokio::test]
async fn a_transparent_relay_carries_the_session_but_reads_nothing() {
    let (server, counts) = counting_server(ServerConfig::default()).await;
    let seen = Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    let log = seen.clone();
    let addr = relay(server.addr.clone(), move |mut client, mut upstream| {
        let log = log.clone();
        async move {
            // Record everything the client sends, forward everything both ways.
            let (mut up, mut down) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
            loop {
                tokio::select! {
                    n = client.read(&mut up) => match n {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            log.lock().unwrap().extend_from_slice(&up[..n]);
                            if upstream.write_all(&up[..n]).await.is_err() { return }
                        }
                    },
                    n = upstream.read(&mut down) => match n {
                        Ok(0) | Err(_) => return,
                        Ok(n) => if client.write_all(&down[..n]).await.is_err() { return },
                    },
                }
            }
        }
    })
    .await;
    let answer = network(SECRET)
        .call_client(
            SERVER_ID,
            &addr,
            ClientRequest::Propose(PAYLOAD.to_vec()),
            T,
        )
        .await
        .unwrap();
    let mut reversed = PAYLOAD.to_vec();
    reversed.reverse();
    assert_eq!(answer, echoed(reversed));
    assert_eq!(counts.get().2, 1);
    let seen = seen.lock().unwrap().clone();
    assert!(seen.len() > PAYLOAD.len());
    for window in PAYLOAD.chunks(8).filter(|w| w.len() == 8) {
        assert!(
            !seen.windows(8).any(|w| w == window),
            "plaintext {:?} visible to the relay",
            String::from_utf8_lossy(window)
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn a_relay_reflecting_a_servers_own_dial_back_to_it_is_refused() {
    // The observed attack: server 2 is made to dial "server 3" at the relay, which passes the
    // handshake back to server 2's own port, hoping for a session there.
    let (server, counts) = counting_server(ServerConfig::default()).await;
    let addr = relay(server.addr.clone(), |mut client, mut upstream| async move {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    })
    .await;
    let server_2_dialing: Network = Network::with_config(
        SERVER_ID,
        Arc::new(SECRET.to_vec()),
        NetworkConfig::default(),
    );
    let err = server_2_dialing
        .call_client(3, &addr, ClientRequest::Propose(PAYLOAD.to_vec()), T)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            TransportError::Handshake {
                source: AuthError::WrongPeer {
                    expected: 3,
                    got: SERVER_ID
                },
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(counts.get(), (0, 0, 0), "nothing reached the server's core");

    // And at the server: a client stating the server's own id is refused outright.
    let mut stream = TcpStream::connect(&server.addr).await.unwrap();
    let refused = noise::client_handshake(&mut stream, SECRET, SERVER_ID, SERVER_ID, T).await;
    match refused {
        Err(_) => {}
        Ok(mut session) => {
            // The client's half may complete; the server closes before any frame is served.
            let ping = RpcRequest::Client(ClientRequest::ReadIndex);
            let _ = session.write(&mut stream, &ping).await;
            assert!(server_closes(&mut stream).await, "reflected session served");
        }
    }
    assert_eq!(counts.get(), (0, 0, 0));
    assert_serves(&server.addr).await;
    server.stop().await;
}

#[tokio::test]
async fn a_relay_cannot_inject_a_frame_of_its_own() {
    let (server, counts) = counting_server(ServerConfig::default()).await;
    let (injected, mut closed) = tokio::sync::mpsc::unbounded_channel();
    let addr = relay(server.addr.clone(), move |mut client, mut upstream| {
        let injected = injected.clone();
        async move {
            pass_handshake(&mut client, &mut upstream).await;
            // The relay's own "frame": a record of the right shape, sealed under no key it has.
            let request = take_record(&mut client).await;
            let mut forged = request.clone();
            for byte in &mut forged[2..] {
                *byte = rand::random();
            }
            upstream.write_all(&forged).await.unwrap();
            let _ = injected.send(server_closes(&mut upstream).await);
        }
    })
    .await;
    let err = network(SECRET)
        .call_client(
            SERVER_ID,
            &addr,
            ClientRequest::Propose(PAYLOAD.to_vec()),
            T,
        )
        .await
        .unwrap_err();
    assert!(
        !err.is_connect(),
        "the handshake itself went through: {err}"
    );
    assert_eq!(
        closed.recv().await,
        Some(true),
        "the server closed the session"
    );
    assert_eq!(counts.get(), (0, 0, 0), "the forged frame reached nothing");
    assert_serves(&server.addr).await;
    server.stop().await;
}

#[tokio::test]
async fn a_relay_replaying_a_real_frame_or_handshake_gets_nothing_more() {
    let (server, counts) = counting_server(ServerConfig::default()).await;
    let (report, mut reports) = tokio::sync::mpsc::unbounded_channel();
    let target = server.addr.clone();
    let addr = relay(server.addr.clone(), move |mut client, mut upstream| {
        let (report, target) = (report.clone(), target.clone());
        async move {
            // Pass the real session through, recording the client's bytes.
            let m1 = pass_handshake_message(&mut client, &mut upstream).await;
            pass_handshake_message(&mut upstream, &mut client).await;
            let confirm = take_record(&mut client).await;
            upstream.write_all(&confirm).await.unwrap();
            let request = take_record(&mut client).await;
            upstream.write_all(&request).await.unwrap();
            let response = take_record(&mut upstream).await;
            client.write_all(&response).await.unwrap();

            // 1. Replay the served request on the same session: it fails to decrypt.
            upstream.write_all(&request).await.unwrap();
            let replay_in_session = server_closes(&mut upstream).await;

            // 2. Replay the whole client side (message 1, confirmation, request) on a session of
            //    its own: the server answers message 2 with a fresh key, so the confirmation
            //    fails and the request is never read.
            let mut own = TcpStream::connect(&target).await.unwrap();
            write_frame(&mut own, &m1).await.unwrap();
            let _m2: Vec<u8> = read_frame(&mut own, MAX_HANDSHAKE_FRAME).await.unwrap();
            own.write_all(&confirm).await.unwrap();
            let _ = own.write_all(&request).await;
            let replay_new_session = server_closes(&mut own).await;
            let _ = report.send((replay_in_session, replay_new_session));
        }
    })
    .await;
    let net = network(SECRET);
    let answer = net
        .call_client(
            SERVER_ID,
            &addr,
            ClientRequest::Propose(PAYLOAD.to_vec()),
            T,
        )
        .await
        .unwrap();
    assert!(answer.is_ok(), "{answer:?}");
    assert_eq!(reports.recv().await, Some((true, true)));
    assert_eq!(
        counts.get(),
        (0, 0, 1),
        "the request was carried out once, not replayed"
    );
    server.stop().await;
}

/// A relay passing the handshake through, then flipping one bit of the first record going
/// `towards_server` (else towards the client) at `offset` within the record.
async fn flipping_relay(upstream: String, towards_server: bool, offset: usize) -> String {
    relay(upstream, move |mut client, mut upstream| async move {
        pass_handshake(&mut client, &mut upstream).await;
        let mut request = take_record(&mut client).await;
        if towards_server {
            let i = 2 + offset % (request.len() - 2);
            request[i] ^= 0x01;
        }
        upstream.write_all(&request).await.unwrap();
        let Ok(Ok(mut response)) =
            tokio::time::timeout(Duration::from_secs(3), try_take_record(&mut upstream)).await
        else {
            // The server closed the session on the altered request: nothing to answer.
            return;
        };
        if !towards_server {
            let i = 2 + offset % (response.len() - 2);
            response[i] ^= 0x01;
        }
        let _ = client.write_all(&response).await;
        let _ = server_closes(&mut upstream).await;
    })
    .await
}

#[tokio::test]
async fn flipping_one_ciphertext_bit_kills_the_session() {
    let (server, counts) = counting_server(ServerConfig::default()).await;
    for offset in [0, 5, 17, 40, 1000] {
        let addr = flipping_relay(server.addr.clone(), true, offset).await;
        let err = network(SECRET)
            .call_client(
                SERVER_ID,
                &addr,
                ClientRequest::Propose(PAYLOAD.to_vec()),
                T,
            )
            .await
            .unwrap_err();
        assert!(!err.is_connect(), "{err}");
    }
    assert_eq!(
        counts.get(),
        (0, 0, 0),
        "no altered request was carried out"
    );

    // Towards the client: the server acted, but the client refuses the altered answer.
    let addr = flipping_relay(server.addr.clone(), false, 3).await;
    let err = network(SECRET)
        .call_client(SERVER_ID, &addr, ClientRequest::ReadIndex, T)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("failed authentication"),
        "the answer must fail to decrypt: {err}"
    );
    server.stop().await;
}

#[tokio::test]
async fn wrong_secret_is_refused() {
    let (server, counts) = counting_server(ServerConfig::default()).await;
    let err = network(b"a guessed secret")
        .call_client(
            SERVER_ID,
            &server.addr,
            ClientRequest::Propose(PAYLOAD.to_vec()),
            T,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Handshake { .. }), "{err}");
    assert_eq!(counts.get(), (0, 0, 0));
    server.stop().await;
}

#[tokio::test]
async fn a_server_other_than_the_one_dialed_is_refused() {
    let server = Server::start(SECRET).await;
    let err = network(SECRET)
        .call_client(5, &server.addr, ClientRequest::ReadIndex, T)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            TransportError::Handshake {
                source: AuthError::WrongPeer {
                    expected: 5,
                    got: SERVER_ID
                },
                ..
            }
        ),
        "{err}"
    );
    server.stop().await;
}

fn vote_from(candidate: NodeId) -> RpcRequest {
    RpcRequest::Vote(VoteRequest::<TypeConfig>::new(
        VoteOf::<TypeConfig>::new(4, candidate),
        None,
    ))
}

#[tokio::test]
async fn a_member_speaking_for_another_id_is_refused() {
    let (server, counts) = counting_server(ServerConfig::default()).await;
    // Member 1 asks for votes as itself: served.
    let net = network(SECRET);
    let answer = net
        .call(&server.addr, SERVER_ID, &vote_from(CLIENT_ID), T)
        .await;
    assert!(matches!(answer, Ok(RpcResponse::Vote(_))), "{answer:?}");
    assert_eq!(counts.get().1, 1);
    // ... and as member 3 over its own session: refused before the core sees it.
    let answer = net
        .call(&server.addr, SERVER_ID, &vote_from(3), T)
        .await
        .unwrap();
    match answer {
        RpcResponse::RaftError(reason) => assert!(
            reason.contains("names node 3") && reason.contains("authenticated node 1"),
            "{reason}"
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(counts.get().1, 1, "the core saw only the honest vote");
    server.stop().await;
}
