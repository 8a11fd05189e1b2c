//! The internal transport over real TCP on loopback: authentication, pooling, hostile input,
//! timeouts and injected faults, against a stub raft core and a toy client handler.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use convoy_raft::network::client::{Network, TransportError};
use convoy_raft::network::fault::FaultRule;
use convoy_raft::network::server::{serve, ServerConfig, TransportServer};
use convoy_raft::network::{ClientError, ClientRequest, ClientResponse};
use convoy_raft::types::{Member, NodeId, TypeConfig};
use openraft::error::RPCError;
use openraft::network::{RPCOption, RaftNetworkFactory, RaftNetworkV2};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, TransferLeaderRequest, VoteRequest,
};
use openraft::type_config::alias::VoteOf;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use crate::common::*;

/// A TCP relay that counts the connections made through it.
async fn counting_proxy(upstream: String) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            let upstream = upstream.clone();
            tokio::spawn(async move {
                if let Ok(mut outbound) = TcpStream::connect(upstream).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    (addr, count)
}

#[tokio::test]
async fn client_request_round_trips_over_one_pooled_connection() {
    let server = Server::start(SECRET).await;
    let (addr, connections) = counting_proxy(server.addr.clone()).await;
    let net = network(SECRET);

    let answer = net
        .call_client(SERVER_ID, &addr, ClientRequest::Propose(vec![1, 2, 3]), T)
        .await
        .unwrap();
    assert_eq!(answer, echoed(vec![3, 2, 1]));
    for i in 0..20u64 {
        let answer = net
            .call_client(
                SERVER_ID,
                &addr,
                ClientRequest::AddMember {
                    id: i,
                    member: Member::default(),
                },
                T,
            )
            .await
            .unwrap();
        assert_eq!(
            answer,
            Err(ClientError::Invalid(format!("cannot add member {i}")))
        );
    }
    assert_eq!(
        net.call_client(SERVER_ID, &addr, ClientRequest::ReadIndex, T)
            .await
            .unwrap(),
        Ok(ClientResponse::ReadIndex(42))
    );
    assert_eq!(
        connections.load(Ordering::SeqCst),
        1,
        "one connection reused"
    );
    assert_eq!(net.idle_connections(&addr), 1);

    // Concurrent calls each take their own connection; all of them go back to the pool.
    let calls = (0..4).map(|i| {
        let net = net.clone();
        let addr = addr.clone();
        async move {
            net.call_client(SERVER_ID, &addr, ClientRequest::Propose(vec![i]), T)
                .await
                .unwrap()
        }
    });
    for (i, answer) in futures::future::join_all(calls)
        .await
        .into_iter()
        .enumerate()
    {
        assert_eq!(answer, echoed(vec![i as u8]));
    }
    assert!(connections.load(Ordering::SeqCst) <= 4);
    server.stop().await;
}

#[tokio::test]
async fn dropped_connection_is_replaced_on_the_next_call() {
    let server = Server::start_with(
        SECRET,
        ServerConfig {
            idle_timeout: Duration::from_millis(100),
            ..ServerConfig::default()
        },
    )
    .await;
    let net = network(SECRET);
    assert_serves(&server.addr).await;
    net.call_client(SERVER_ID, &server.addr, ClientRequest::ReadIndex, T)
        .await
        .unwrap()
        .unwrap();
    // The server closes the idle pooled connection; the client must notice and redial.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let answer = net
        .call_client(SERVER_ID, &server.addr, ClientRequest::ReadIndex, T)
        .await
        .expect("a closed pooled connection is not reused");
    assert_eq!(answer, Ok(ClientResponse::ReadIndex(42)));
    server.stop().await;
}

#[tokio::test]
async fn peer_with_wrong_secret_is_rejected_and_server_keeps_serving() {
    let server = Server::start(SECRET).await;
    let intruder = network(b"wrong secret");
    for _ in 0..3 {
        let err = intruder
            .call_client(SERVER_ID, &server.addr, ClientRequest::Propose(vec![1]), T)
            .await
            .unwrap_err();
        assert!(matches!(err, TransportError::Handshake { .. }), "{err}");
        assert!(err.to_string().contains(&server.addr), "{err}");
    }
    assert_eq!(intruder.idle_connections(&server.addr), 0);
    assert_serves(&server.addr).await;

    // A client checks the server too: an impostor without the secret is refused.
    let impostor = Server::start(b"impostor").await;
    let err = network(SECRET)
        .call_client(SERVER_ID, &impostor.addr, ClientRequest::ReadIndex, T)
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Handshake { .. }), "{err}");
    impostor.stop().await;
    server.stop().await;
}

#[tokio::test]
async fn garbage_frame_closes_the_connection_and_server_keeps_serving() {
    let server = Server::start(SECRET).await;

    // Unsealed garbage after authenticating: it fails to decrypt.
    let (mut stream, _session) = authenticated(&server.addr).await;
    let mut record = vec![0, 20];
    record.extend([0xff; 20]);
    stream.write_all(&record).await.unwrap();
    assert_closed(stream).await;
    assert_serves(&server.addr).await;

    // A correctly sealed frame whose body is no RpcRequest.
    let (mut stream, mut session) = authenticated(&server.addr).await;
    session
        .write_body(&mut stream, &[0xff, 0xff, 0xff, 0xff])
        .await
        .unwrap();
    assert_closed(stream).await;
    assert_serves(&server.addr).await;

    // Garbage instead of a handshake (someone speaking HTTP to the raft port).
    let mut stream = TcpStream::connect(&server.addr).await.unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    assert_closed(stream).await;
    assert_serves(&server.addr).await;

    // A frame truncated by the peer hanging up mid-record.
    let (mut stream, _session) = authenticated(&server.addr).await;
    stream.write_all(&[1, 0, 1, 2, 3]).await.unwrap();
    drop(stream);
    assert_serves(&server.addr).await;
    server.stop().await;
}

#[tokio::test]
async fn oversized_length_prefix_closes_the_connection_and_server_keeps_serving() {
    let server = Server::start(SECRET).await;

    // The largest record the length allows, unsealed: it fails to decrypt. (A sealed length
    // over the cap is refused after the first record: sealed_test.rs.)
    let (mut stream, _session) = authenticated(&server.addr).await;
    let mut record = vec![0xff, 0xff];
    record.extend(vec![0x42; 65_535]);
    stream.write_all(&record).await.unwrap();
    assert_closed(stream).await;
    assert_serves(&server.addr).await;

    // Before authentication the cap is tiny: 1 KiB is already too much for a handshake.
    let mut stream = TcpStream::connect(&server.addr).await.unwrap();
    stream.write_all(&1024u32.to_be_bytes()).await.unwrap();
    assert_closed(stream).await;
    assert_serves(&server.addr).await;
    server.stop().await;
}

#[tokio::test]
async fn silent_client_is_dropped_after_the_handshake_timeout() {
    let server = Server::start_with(
        SECRET,
        ServerConfig {
            handshake_timeout: Duration::from_millis(200),
            ..ServerConfig::default()
        },
    )
    .await;
    let stream = TcpStream::connect(&server.addr).await.unwrap();
    assert_closed(stream).await;
    assert_serves(&server.addr).await;
    server.stop().await;
}

#[tokio::test]
async fn sessions_beyond_the_limit_are_refused_without_stalling() {
    let server = Server::start_with(
        SECRET,
        ServerConfig {
            max_connections: 2,
            handshake_timeout: Duration::from_secs(30),
            ..ServerConfig::default()
        },
    )
    .await;
    // Silent unauthenticated clients hold no session slot.
    let silent: Vec<_> =
        futures::future::join_all((0..4).map(|_| TcpStream::connect(&server.addr))).await;
    // Two authenticated sessions hold both slots; a third is closed right after its handshake.
    let a = authenticated(&server.addr).await;
    let b = authenticated(&server.addr).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (c, _session) = authenticated(&server.addr).await;
    assert_closed(c).await;
    drop((a, b));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_serves(&server.addr).await;
    drop(silent);
    server.stop().await;
}

#[tokio::test]
async fn rpc_to_an_unresponsive_server_times_out_in_time() {
    // Accepts connections (the kernel does, via the backlog) but never says a word.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let timeout = Duration::from_millis(300);
    let start = Instant::now();
    let err = network(SECRET)
        .call_client(SERVER_ID, &addr, ClientRequest::ReadIndex, timeout)
        .await
        .unwrap_err();
    let took = start.elapsed();
    assert!(err.is_timeout(), "{err}");
    assert!(
        took >= timeout && took < timeout + Duration::from_millis(500),
        "{took:?}"
    );
    drop(listener);
}

#[tokio::test]
async fn connection_refused_fails_fast_as_connect_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    drop(listener);
    let start = Instant::now();
    let err = network(SECRET)
        .call_client(SERVER_ID, &addr, ClientRequest::ReadIndex, T)
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Connect { .. }), "{err}");
    assert!(start.elapsed() < Duration::from_secs(1));
}

fn vote_request(term: u64, candidate: NodeId) -> VoteRequest<TypeConfig> {
    VoteRequest::new(VoteOf::<TypeConfig>::new(term, candidate), None)
}

async fn peer_client(net: &Network, target: NodeId, addr: &str) -> impl RaftNetworkV2<TypeConfig> {
    let mut factory = net.clone();
    let member = Member {
        raft_addr: addr.to_string(),
        http_addr: String::new(),
    };
    factory.new_client(target, &member).await
}

#[tokio::test]
async fn raft_rpcs_reach_the_core_and_errors_map_to_openraft() {
    let server = Server::start(SECRET).await;
    let net = network(SECRET);
    let mut peer = peer_client(&net, 2, &server.addr).await;
    let option = RPCOption::new(Duration::from_secs(2));

    let granted = peer.vote(vote_request(3, 1), option.clone()).await.unwrap();
    assert!(granted.vote_granted);
    let pre = peer
        .pre_vote(vote_request(4, 1), option.clone())
        .await
        .unwrap();
    assert!(!pre.vote_granted);
    let transfer = TransferLeaderRequest::new(VoteOf::<TypeConfig>::new(3, 1), 2, None);
    assert_eq!(
        peer.transfer_leader(transfer, option.clone())
            .await
            .unwrap(),
        Ok(())
    );

    // The core's refusal comes back as Unreachable (openraft backs off).
    let append = AppendEntriesRequest {
        vote: VoteOf::<TypeConfig>::new(3, 1),
        prev_log_id: None,
        entries: vec![],
        leader_commit: None,
    };
    let err = peer
        .append_entries(append, option.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, RPCError::Unreachable(_)), "{err}");

    // Wrong secret: Unreachable too.
    let mut intruder = peer_client(&network(b"nope"), 2, &server.addr).await;
    let err = intruder
        .vote(vote_request(3, 1), option.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, RPCError::Unreachable(_)), "{err}");

    // A black hole: Timeout within the soft ttl.
    let hole = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut lost = peer_client(&net, 3, &hole.local_addr().unwrap().to_string()).await;
    let short = RPCOption::new(Duration::from_millis(400));
    let start = Instant::now();
    let err = lost
        .vote(vote_request(3, 1), short.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, RPCError::Timeout(_)), "{err}");
    assert!(start.elapsed() < short.hard_ttl(), "{:?}", start.elapsed());
    assert!(lost.backoff().is_some());
    server.stop().await;
}

#[tokio::test]
async fn fault_policy_blocks_drops_and_delays_per_target() {
    let server = Server::start(SECRET).await;
    let net = network(SECRET);
    let mut to_2 = peer_client(&net, 2, &server.addr).await;
    let other = Server::start_as(3, SECRET).await;
    let mut to_3 = peer_client(&net, 3, &other.addr).await;
    let option = RPCOption::new(Duration::from_millis(400));

    net.fault_policy().write().unwrap().block(2);
    let start = Instant::now();
    let err = to_2
        .vote(vote_request(1, 1), option.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, RPCError::Unreachable(_)), "{err}");
    assert!(
        start.elapsed() < Duration::from_millis(100),
        "blocked fails at once"
    );
    to_3.vote(vote_request(1, 1), option.clone()).await.unwrap();
    net.fault_policy().write().unwrap().unblock(2);
    to_2.vote(vote_request(1, 1), option.clone()).await.unwrap();

    net.fault_policy().write().unwrap().set(
        2,
        FaultRule {
            drop_probability: 1.0,
            ..FaultRule::default()
        },
    );
    let err = to_2
        .vote(vote_request(1, 1), option.clone())
        .await
        .unwrap_err();
    assert!(matches!(err, RPCError::Timeout(_)), "{err}");

    let delay = Duration::from_millis(150);
    net.fault_policy().write().unwrap().set(
        2,
        FaultRule {
            delay,
            jitter: Duration::from_millis(20),
            ..FaultRule::default()
        },
    );
    let start = Instant::now();
    to_2.vote(vote_request(1, 1), option.clone()).await.unwrap();
    assert!(start.elapsed() >= delay);

    net.fault_policy().write().unwrap().clear_all();
    let start = Instant::now();
    to_2.vote(vote_request(1, 1), option).await.unwrap();
    assert!(start.elapsed() < delay);
    server.stop().await;
}

fn append_request(term: u64) -> AppendEntriesRequest<TypeConfig> {
    AppendEntriesRequest {
        vote: VoteOf::<TypeConfig>::new(term, 1),
        prev_log_id: None,
        entries: vec![],
        leader_commit: None,
    }
}

#[tokio::test]
async fn duplicated_rpcs_reach_the_core_twice_and_answer_once_in_step() {
    let (server, counts) = counting_server(ServerConfig::default()).await;
    let net = network(SECRET);
    let mut to_2 = peer_client(&net, 2, &server.addr).await;
    let option = RPCOption::new(Duration::from_secs(2));
    net.fault_policy().write().unwrap().set(
        2,
        FaultRule {
            duplicate_probability: 1.0,
            ..FaultRule::default()
        },
    );

    for term in 1..=5u64 {
        // Each answer is the one to this very request (the stub echoes the vote's term), never
        // the leftover answer of the previous call's duplicate.
        let granted = to_2
            .vote(vote_request(term, 1), option.clone())
            .await
            .unwrap();
        assert_eq!(granted.vote, VoteOf::<TypeConfig>::new(term, 1));
        assert!(granted.vote_granted);
        let appended = to_2
            .append_entries(append_request(term), option.clone())
            .await
            .unwrap();
        assert_eq!(appended, AppendEntriesResponse::Success);
    }
    assert_eq!(
        counts.get(),
        (10, 10, 0),
        "(appends, votes, client) each delivered twice"
    );
    assert_eq!(
        net.idle_connections(&server.addr),
        1,
        "one connection, kept in step"
    );

    // Forwarded client requests to the same peer are never duplicated.
    let answer = net
        .call_client(
            SERVER_ID,
            &server.addr,
            ClientRequest::Propose(vec![1, 2]),
            T,
        )
        .await
        .unwrap();
    assert_eq!(answer, echoed(vec![2, 1]));
    assert_eq!(counts.get().2, 1);

    // Without the rule, one delivery each again.
    net.fault_policy().write().unwrap().clear(2);
    to_2.vote(vote_request(9, 1), option).await.unwrap();
    assert_eq!(counts.get().1, 11);
    server.stop().await;
}

#[tokio::test]
async fn serve_with_defaults_stops_on_shutdown() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(
        listener,
        SERVER_ID,
        StubRaft,
        Arc::new(SECRET.to_vec()),
        Arc::new(Echo),
        async move {
            let _ = stopped.await;
        },
    ));
    assert_serves(&addr).await;
    // An open authenticated connection must not keep the server alive.
    let (open, _session) = authenticated(&addr).await;
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(2), task)
        .await
        .unwrap()
        .unwrap();
    assert_closed(open).await;
}

#[tokio::test]
async fn transport_server_handle_stops_and_closes_connections() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = TransportServer::spawn(
        listener,
        SERVER_ID,
        StubRaft,
        Arc::new(SECRET.to_vec()),
        Arc::new(Echo),
    );
    let addr = server.local_addr().unwrap().to_string();
    assert_serves(&addr).await;
    let (open, _session) = authenticated(&addr).await;
    tokio::time::timeout(Duration::from_secs(2), server.shutdown())
        .await
        .unwrap();
    assert_closed(open).await;
    assert!(TcpStream::connect(&addr).await.is_err(), "listener closed");
}
