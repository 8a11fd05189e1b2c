//! Tests of the Noise handshake over in-memory pipes: who is admitted, who is refused and why,
//! and what a replay of a real client's first message buys (nothing).

use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

use super::*;

const T: Duration = Duration::from_secs(2);

/// Runs a handshake between client `client_id` (holding `client_secret`, dialing `dialed`) and
/// server `server_id` (holding `server_secret`).
async fn run(
    server_secret: &[u8],
    server_id: NodeId,
    client_secret: &[u8],
    client_id: NodeId,
    dialed: NodeId,
) -> (Result<Session, AuthError>, Result<Session, AuthError>) {
    let (mut a, mut b) = tokio::io::duplex(4096);
    let server = async {
        let r = server_handshake(&mut a, server_secret, server_id, T).await;
        drop(a);
        r
    };
    let client = async {
        let r = client_handshake(&mut b, client_secret, client_id, dialed, T).await;
        // Keep the pipe open until the server has read the confirmation.
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(b);
        r
    };
    tokio::join!(server, client)
}

#[tokio::test]
async fn same_secret_authenticates_both_ways_and_binds_the_ids() {
    let (s, c) = run(b"cluster-secret", 2, b"cluster-secret", 1, 2).await;
    assert_eq!(s.unwrap().peer(), 1, "the server records the client's id");
    assert_eq!(c.unwrap().peer(), 2, "the client records the id it dialed");
}

#[tokio::test]
async fn wrong_secret_is_rejected_by_the_server() {
    let (s, c) = run(b"cluster-secret", 2, b"guess", 1, 2).await;
    assert!(matches!(s, Err(AuthError::BadSecret)), "{s:?}");
    assert!(c.is_err(), "{c:?}");
}

#[tokio::test]
async fn server_without_the_secret_is_rejected_by_the_client() {
    // An impostor cannot decrypt message 1, so it answers with bytes of the right shape.
    let (mut a, mut b) = tokio::io::duplex(4096);
    let impostor = async move {
        let _: Vec<u8> = read_frame(&mut a, MAX_HANDSHAKE_FRAME).await.unwrap();
        let fake: Vec<u8> = (0..64u8).collect();
        write_frame(&mut a, &fake).await.unwrap();
        a
    };
    let client = client_handshake(&mut b, b"cluster-secret", 1, 2, T);
    let (_a, r) = tokio::join!(impostor, client);
    assert!(matches!(r, Err(AuthError::BadSecret)), "{r:?}");
}

#[tokio::test]
async fn server_with_another_id_than_dialed_is_refused() {
    let (_s, c) = run(b"k", 3, b"k", 1, 2).await;
    assert!(
        matches!(
            c,
            Err(AuthError::WrongPeer {
                expected: 2,
                got: 3
            })
        ),
        "{c:?}"
    );
}

#[tokio::test]
async fn client_claiming_the_servers_own_id_is_refused() {
    let (s, _c) = run(b"k", 2, b"k", 2, 2).await;
    assert!(matches!(s, Err(AuthError::Reflected { id: 2 })), "{s:?}");
}

/// A client that states `hello` in message 1 and returns the server's raw answer.
async fn client_saying(stream: &mut DuplexStream, secret: &[u8], hello: &Hello) -> Vec<u8> {
    let psk = derive_psk(secret);
    let mut noise = builder(&psk).build_initiator().unwrap();
    send_hello(stream, &mut noise, hello).await.unwrap();
    read_frame(stream, MAX_HANDSHAKE_FRAME).await.unwrap()
}

#[tokio::test]
async fn other_protocol_version_is_refused_by_the_server() {
    let (mut a, mut b) = tokio::io::duplex(4096);
    let hello = Hello {
        version: PROTOCOL_VERSION + 1,
        ..Hello::new(1, &crate::identity::NoIdentity)
    };
    let (r, _) = tokio::join!(
        server_handshake(&mut a, b"k", 2, T),
        client_saying(&mut b, b"k", &hello)
    );
    assert!(
        matches!(r, Err(AuthError::Version { got }) if got == PROTOCOL_VERSION + 1),
        "{r:?}"
    );
}

#[tokio::test]
async fn other_protocol_version_is_refused_by_the_client() {
    let (mut a, mut b) = tokio::io::duplex(4096);
    let server = async move {
        let psk = derive_psk(b"k");
        let mut noise = builder(&psk).build_responder().unwrap();
        let _ = recv_hello(&mut a, &mut noise).await.unwrap();
        let hello = Hello {
            version: PROTOCOL_VERSION + 7,
            ..Hello::new(2, &crate::identity::NoIdentity)
        };
        send_hello(&mut a, &mut noise, &hello).await.unwrap();
        a
    };
    let (_a, r) = tokio::join!(server, client_handshake(&mut b, b"k", 1, 2, T));
    assert!(
        matches!(r, Err(AuthError::Version { got }) if got == PROTOCOL_VERSION + 7),
        "{r:?}"
    );
}

#[tokio::test]
async fn replayed_first_message_buys_no_session() {
    // Record a real client's bytes towards a real server.
    let (mut server_side, mut relay_in) = tokio::io::duplex(4096);
    let (mut client_side, mut relay_out) = tokio::io::duplex(4096);
    let relay = async move {
        // Forward message 1, message 2 and the confirmation, keeping a copy of what the client sent.
        let m1: Vec<u8> = read_frame(&mut relay_out, MAX_HANDSHAKE_FRAME)
            .await
            .unwrap();
        write_frame(&mut relay_in, &m1).await.unwrap();
        let m2: Vec<u8> = read_frame(&mut relay_in, MAX_HANDSHAKE_FRAME)
            .await
            .unwrap();
        write_frame(&mut relay_out, &m2).await.unwrap();
        let mut confirm = vec![0u8; 2 + CONFIRM.len() + 4 + 16];
        relay_out.read_exact(&mut confirm).await.unwrap();
        relay_in.write_all(&confirm).await.unwrap();
        (m1, confirm, relay_in, relay_out)
    };
    let (s, c, (m1, confirm, _i, _o)) = tokio::join!(
        server_handshake(&mut server_side, b"k", 2, T),
        client_handshake(&mut client_side, b"k", 1, 2, T),
        relay
    );
    assert_eq!(s.unwrap().peer(), 1);
    c.unwrap();

    // Replaying message 1 to the server gets a fresh message 2, but the recorded confirmation
    // is sealed under the old session's keys, and a guess under no keys at all.
    for attempt in [confirm.clone(), {
        let mut forged = confirm.clone();
        forged[5] ^= 1;
        forged
    }] {
        let (mut server_side, mut attacker) = tokio::io::duplex(4096);
        let m1 = m1.clone();
        let attack = async move {
            write_frame(&mut attacker, &m1).await.unwrap();
            let _m2: Vec<u8> = read_frame(&mut attacker, MAX_HANDSHAKE_FRAME)
                .await
                .unwrap();
            attacker.write_all(&attempt).await.unwrap();
            attacker
        };
        let (r, _attacker) = tokio::join!(server_handshake(&mut server_side, b"k", 2, T), attack);
        assert!(matches!(r, Err(AuthError::BadSecret)), "{r:?}");
    }
}

#[tokio::test]
async fn silent_peer_times_out() {
    let (mut a, _b) = tokio::io::duplex(1024);
    let r = client_handshake(&mut a, b"k", 1, 2, Duration::from_millis(50)).await;
    assert!(matches!(r, Err(AuthError::Timeout { .. })), "{r:?}");
    let (mut a, _b) = tokio::io::duplex(1024);
    let r = server_handshake(&mut a, b"k", 2, Duration::from_millis(50)).await;
    assert!(matches!(r, Err(AuthError::Timeout { .. })), "{r:?}");
}

#[test]
fn psk_is_a_labelled_function_of_the_secret() {
    assert_eq!(derive_psk(b"k"), derive_psk(b"k"));
    assert_ne!(derive_psk(b"k"), derive_psk(b"l"));
    assert_ne!(derive_psk(b"k").as_slice(), b"k".as_slice());
    // Not the bare HMAC of an empty message: the label is mixed in.
    let mut bare = Hmac::<Sha256>::new_from_slice(b"k").unwrap();
    bare.update(b"");
    assert_ne!(
        derive_psk(b"k").as_slice(),
        bare.finalize().into_bytes().as_slice()
    );
}

/// Runs a handshake between client 1 with identity `client` and server 2 with identity `server`.
async fn run_with(
    server: &dyn PeerCheck,
    client: &dyn PeerCheck,
) -> (Result<Session, AuthError>, Result<Session, AuthError>) {
    let (mut a, mut b) = tokio::io::duplex(4096);
    let server = async {
        let r = server_handshake_with(&mut a, b"k", 2, T, server).await;
        drop(a);
        r
    };
    let client = async {
        let r = client_handshake_with(&mut b, b"k", 1, 2, T, client).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(b);
        r
    };
    tokio::join!(server, client)
}

fn identity(dir: &tempfile::TempDir, id: NodeId, cluster: u128) -> crate::identity::Identity {
    let (identity, _) =
        crate::identity::Identity::open(dir.path(), id, Some(ClusterId(cluster)), true, 1).unwrap();
    identity.set_voters([1, 2, 3].into());
    identity
}

#[tokio::test]
async fn members_of_one_cluster_meet_and_record_each_other() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (one, two) = (identity(&d1, 1, 7), identity(&d2, 2, 7));
    let (s, c) = run_with(&two, &one).await;
    assert!(s.is_ok() && c.is_ok(), "{s:?} {c:?}");
    assert_eq!(two.known(1), Some(one.incarnation()));
    assert_eq!(one.known(2), Some(two.incarnation()));
}

#[tokio::test]
async fn a_server_of_another_cluster_is_refused_on_both_sides() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (one, two) = (identity(&d1, 1, 7), identity(&d2, 2, 8));
    let (s, c) = run_with(&two, &one).await;
    assert!(
        matches!(
            &s,
            Err(AuthError::Refused(Refusal::OtherCluster {
                by: 2,
                of: 1,
                ..
            }))
        ),
        "{s:?}"
    );
    assert!(
        matches!(
            &c,
            Err(AuthError::RefusedBy(Refusal::OtherCluster {
                by: 2,
                of: 1,
                ..
            }))
        ),
        "{c:?}"
    );
}

#[tokio::test]
async fn a_wiped_client_is_refused_by_the_server_and_told_why() {
    let (d1, d2, wiped) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let (one, two) = (identity(&d1, 1, 7), identity(&d2, 2, 7));
    let (s, c) = run_with(&two, &one).await;
    assert!(s.is_ok() && c.is_ok());
    // Server 1 again, on an empty data dir: a new incarnation.
    let (again, _) = crate::identity::Identity::open(wiped.path(), 1, None, true, 1).unwrap();
    let (s, c) = run_with(&two, &again).await;
    assert!(
        matches!(
            &s,
            Err(AuthError::Refused(Refusal::Replaced { by: 2, of: 1, .. }))
        ),
        "{s:?}"
    );
    let Err(AuthError::RefusedBy(refusal)) = c else {
        panic!("the client is not told: {c:?}")
    };
    assert!(
        refusal.to_string().contains("replace-member 1"),
        "{refusal}"
    );
}

#[tokio::test]
async fn a_wiped_server_is_refused_by_the_client_which_tells_it_why() {
    let (d1, d2, wiped) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let (one, two) = (identity(&d1, 1, 7), identity(&d2, 2, 7));
    let (s, c) = run_with(&two, &one).await;
    assert!(s.is_ok() && c.is_ok());
    let (again, _) = crate::identity::Identity::open(wiped.path(), 2, None, true, 1).unwrap();
    let (s, c) = run_with(&again, &one).await;
    assert!(
        matches!(
            &c,
            Err(AuthError::Refused(Refusal::Replaced { by: 1, of: 2, .. }))
        ),
        "{c:?}"
    );
    assert!(
        matches!(
            &s,
            Err(AuthError::RefusedBy(Refusal::Replaced { by: 1, of: 2, .. }))
        ),
        "{s:?}"
    );
    // The wiped server took the cluster id from its peer on the way.
    assert_eq!(again.cluster(), Some(ClusterId(7)));
}

#[tokio::test]
async fn a_peer_without_identity_fields_is_still_understood() {
    // A version-2 hello (no identity) decodes, stating nothing.
    #[derive(serde::Serialize)]
    struct Old {
        version: u32,
        id: NodeId,
    }
    let bytes = codec::encode(&Old { version: 2, id: 4 }).unwrap();
    let hello = Hello::decode(&bytes).unwrap();
    assert_eq!((hello.version, hello.id, hello.incarnation), (2, 4, 0));
    assert!(hello.cluster.is_none() && hello.refused.is_none());
    // And a new hello read by an old server yields its first two fields.
    #[derive(serde::Deserialize)]
    struct OldRead {
        version: u32,
        id: NodeId,
    }
    let new = Hello::new(5, &crate::identity::NoIdentity);
    let old: OldRead = codec::decode(&codec::encode(&new).unwrap()).unwrap();
    assert_eq!((old.version, old.id), (PROTOCOL_VERSION, 5));
}
