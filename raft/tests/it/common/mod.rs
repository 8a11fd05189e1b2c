//! The in-process transport fixture shared by the transport tests: a stub raft core, a toy
//! client handler, a server on loopback and helpers to probe it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use convoy_raft::network::client::{Network, NetworkConfig};
use convoy_raft::network::noise;
use convoy_raft::network::sealed::Session;
use convoy_raft::network::server::{serve_with, RaftRpcTarget, ServerConfig};
use convoy_raft::network::{ClientError, ClientHandler, ClientRequest, ClientResponse};
use convoy_raft::types::{NodeId, Reply, TypeConfig};
use futures::future::BoxFuture;
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, TransferLeaderRequest,
    TransferLeaderResponse, VoteRequest, VoteResponse,
};
use openraft::type_config::alias::{SnapshotMetaOf, VoteOf};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

pub const SECRET: &[u8] = b"correct horse battery staple";
/// The id of the servers [`Server::start`] runs.
pub const SERVER_ID: NodeId = 2;
/// The id of the client side [`network`] makes.
pub const CLIENT_ID: NodeId = 1;

/// A raft core that grants every vote, refuses pre-votes and fails everything else.
pub struct StubRaft;

impl RaftRpcTarget for StubRaft {
    async fn append_entries(
        &self,
        _rpc: AppendEntriesRequest<TypeConfig>,
    ) -> Result<AppendEntriesResponse<TypeConfig>, String> {
        Err("stub raft: no log".into())
    }

    async fn vote(&self, rpc: VoteRequest<TypeConfig>) -> Result<VoteResponse<TypeConfig>, String> {
        Ok(VoteResponse::new(rpc.vote, None, true))
    }

    async fn pre_vote(
        &self,
        rpc: VoteRequest<TypeConfig>,
    ) -> Result<VoteResponse<TypeConfig>, String> {
        Ok(VoteResponse::new(rpc.vote, None, false))
    }

    async fn install_full_snapshot(
        &self,
        _vote: VoteOf<TypeConfig>,
        _meta: SnapshotMetaOf<TypeConfig>,
        _data: Vec<u8>,
    ) -> Result<SnapshotResponse<TypeConfig>, String> {
        Err("stub raft: no snapshots".into())
    }

    async fn transfer_leader(
        &self,
        _req: TransferLeaderRequest<TypeConfig>,
    ) -> Result<TransferLeaderResponse<TypeConfig>, String> {
        Ok(Ok(()))
    }
}

/// What [`Echo`] answers to a proposal of `bytes` reversed: `bytes`, applied at index 7.
pub fn echoed(bytes: Vec<u8>) -> Result<ClientResponse, ClientError> {
    Ok(ClientResponse::Applied {
        index: 7,
        reply: Reply(bytes),
    })
}

/// Answers proposals with the reversed bytes (at index 7), read-index with 42, and refuses membership changes.
pub struct Echo;

impl ClientHandler for Echo {
    fn handle(
        &self,
        request: ClientRequest,
    ) -> BoxFuture<'static, Result<ClientResponse, ClientError>> {
        Box::pin(async move {
            match request {
                ClientRequest::Propose(mut bytes) => {
                    bytes.reverse();
                    echoed(bytes)
                }
                ClientRequest::ReadIndex => Ok(ClientResponse::ReadIndex(42)),
                ClientRequest::AddMember { id, .. } => {
                    Err(ClientError::Invalid(format!("cannot add member {id}")))
                }
                ClientRequest::RemoveMember { .. } => Err(ClientError::NotLeader { leader: None }),
            }
        })
    }
}

pub struct Server {
    pub addr: String,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    pub async fn start(secret: &[u8]) -> Server {
        Server::start_with(secret, ServerConfig::default()).await
    }

    pub async fn start_with(secret: &[u8], config: ServerConfig) -> Server {
        Server::start_serving(StubRaft, Arc::new(Echo), secret, config).await
    }

    /// A [`StubRaft`] server on loopback that is server `id`.
    pub async fn start_as(id: NodeId, secret: &[u8]) -> Server {
        Server::start_serving_as(
            id,
            StubRaft,
            Arc::new(Echo),
            secret,
            ServerConfig::default(),
        )
        .await
    }

    /// Server [`SERVER_ID`] on loopback answering with `raft` and `handler`.
    pub async fn start_serving<R: RaftRpcTarget>(
        raft: R,
        handler: Arc<dyn ClientHandler>,
        secret: &[u8],
        config: ServerConfig,
    ) -> Server {
        Server::start_serving_as(SERVER_ID, raft, handler, secret, config).await
    }

    /// Server `id` on loopback answering with `raft` and `handler`.
    pub async fn start_serving_as<R: RaftRpcTarget>(
        id: NodeId,
        raft: R,
        handler: Arc<dyn ClientHandler>,
        secret: &[u8],
        config: ServerConfig,
    ) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve_with(
            listener,
            id,
            raft,
            Arc::new(secret.to_vec()),
            handler,
            config,
            async move {
                let _ = stopped.await;
            },
        ));
        Server {
            addr,
            stop: Some(stop),
            task,
        }
    }

    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        tokio::time::timeout(Duration::from_secs(5), &mut self.task)
            .await
            .expect("server stops promptly")
            .expect("server task does not panic");
    }
}

/// The client side of server [`CLIENT_ID`] holding `secret`.
pub fn network(secret: &[u8]) -> Network {
    Network::with_config(
        CLIENT_ID,
        Arc::new(secret.to_vec()),
        NetworkConfig::default(),
    )
}

pub const T: Duration = Duration::from_secs(2);

/// Asserts that a correct peer is served.
pub async fn assert_serves(addr: &str) {
    let answer = network(SECRET)
        .call_client(SERVER_ID, addr, ClientRequest::ReadIndex, T)
        .await
        .expect("server still serves correct peers");
    assert_eq!(answer, Ok(ClientResponse::ReadIndex(42)));
}

/// Asserts the server closes `stream` (EOF or reset) soon. The server may first have sent a
/// handshake message, which is read and ignored; anything beyond a handshake's worth of bytes,
/// or a connection left open, fails.
pub async fn assert_closed(mut stream: TcpStream) {
    let mut buf = [0u8; 256];
    let mut total = 0;
    loop {
        let read = tokio::time::timeout(Duration::from_secs(3), stream.read(&mut buf))
            .await
            .expect("server closes the connection instead of waiting");
        match read {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                total += n;
                assert!(
                    total <= 128,
                    "expected the connection closed, got {total} bytes"
                );
            }
        }
    }
}

/// An authenticated raw connection to server [`SERVER_ID`] as [`CLIENT_ID`], and its session,
/// for sending hand-made frames.
pub async fn authenticated(addr: &str) -> (TcpStream, Session) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let session = noise::client_handshake(&mut stream, SECRET, CLIENT_ID, SERVER_ID, T)
        .await
        .unwrap();
    (stream, session)
}

/// How many requests of each kind reached a counting server.
#[derive(Debug, Default)]
pub struct Counts {
    /// AppendEntries delivered to the core.
    pub appends: AtomicUsize,
    /// Votes (not pre-votes) delivered to the core.
    pub votes: AtomicUsize,
    /// Client requests delivered to the handler.
    pub client: AtomicUsize,
}

impl Counts {
    /// `(appends, votes, client)` so far.
    pub fn get(&self) -> (usize, usize, usize) {
        (
            self.appends.load(Ordering::SeqCst),
            self.votes.load(Ordering::SeqCst),
            self.client.load(Ordering::SeqCst),
        )
    }
}

/// [`StubRaft`] that accepts every AppendEntries and counts AppendEntries and votes.
pub struct CountingRaft(pub Arc<Counts>);

impl RaftRpcTarget for CountingRaft {
    async fn append_entries(
        &self,
        _rpc: AppendEntriesRequest<TypeConfig>,
    ) -> Result<AppendEntriesResponse<TypeConfig>, String> {
        self.0.appends.fetch_add(1, Ordering::SeqCst);
        Ok(AppendEntriesResponse::Success)
    }

    async fn vote(&self, rpc: VoteRequest<TypeConfig>) -> Result<VoteResponse<TypeConfig>, String> {
        self.0.votes.fetch_add(1, Ordering::SeqCst);
        StubRaft.vote(rpc).await
    }

    async fn pre_vote(
        &self,
        rpc: VoteRequest<TypeConfig>,
    ) -> Result<VoteResponse<TypeConfig>, String> {
        StubRaft.pre_vote(rpc).await
    }

    async fn install_full_snapshot(
        &self,
        vote: VoteOf<TypeConfig>,
        meta: SnapshotMetaOf<TypeConfig>,
        data: Vec<u8>,
    ) -> Result<SnapshotResponse<TypeConfig>, String> {
        StubRaft.install_full_snapshot(vote, meta, data).await
    }

    async fn transfer_leader(
        &self,
        req: TransferLeaderRequest<TypeConfig>,
    ) -> Result<TransferLeaderResponse<TypeConfig>, String> {
        StubRaft.transfer_leader(req).await
    }
}

/// [`Echo`] that counts the client requests it answers.
pub struct CountingEcho(pub Arc<Counts>);

impl ClientHandler for CountingEcho {
    fn handle(
        &self,
        request: ClientRequest,
    ) -> BoxFuture<'static, Result<ClientResponse, ClientError>> {
        self.0.client.fetch_add(1, Ordering::SeqCst);
        Echo.handle(request)
    }
}

/// A server on loopback with [`CountingRaft`] and [`CountingEcho`], and their counts.
pub async fn counting_server(config: ServerConfig) -> (Server, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let server = Server::start_serving(
        CountingRaft(counts.clone()),
        Arc::new(CountingEcho(counts.clone())),
        SECRET,
        config,
    )
    .await;
    (server, counts)
}
