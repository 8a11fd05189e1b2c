//! TLS for the HTTP API (rustls with the ring provider): the server's certificate and key, an
//! optional CA that client certificates must chain to, the CA a server or client trusts when it
//! calls a server, and `convoy tls init`, which writes a development CA and a certificate for the
//! servers (rcgen) so a walkthrough runs with TLS in two commands.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Why TLS material cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file that cannot be read or holds nothing usable.
    #[error("cannot use {what} {path}: {reason}")]
    File {
        /// What the file should hold.
        what: &'static str,
        /// The PEM file (or, for `tls init`, the directory or output file) that failed.
        path: PathBuf,
        /// The underlying error (I/O, PEM parsing, the HTTP client's), or
        /// `no PEM certificate in the file`.
        reason: String,
    },
    /// rustls refused the combination (a key that does not match the certificate, ...).
    #[error("TLS configuration refused: {0}")]
    Config(String),
    /// A certificate could not be made or written.
    #[error("cannot make {what}: {reason}")]
    Generate {
        /// Which key or certificate: `the CA key`, `the CA`, `the server key` or
        /// `the server certificate`.
        what: String,
        /// The error rcgen gives.
        reason: String,
    },
}

/// The files of a server's TLS setup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerTls {
    /// PEM certificate chain the server presents.
    pub cert: PathBuf,
    /// PEM private key of that certificate.
    pub key: PathBuf,
    /// When set, every client must present a certificate chaining to this CA.
    pub client_ca: Option<PathBuf>,
    /// The CA this server trusts when it calls another server (forwarding to the leader).
    pub ca: Option<PathBuf>,
}

fn file_error(what: &'static str, path: &Path, reason: impl ToString) -> TlsError {
    TlsError::File {
        what,
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

/// Every certificate in a PEM file (at least one).
pub fn load_certs(
    what: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| file_error(what, path, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file_error(what, path, e))?;
    if certs.is_empty() {
        return Err(file_error(what, path, "no PEM certificate in the file"));
    }
    Ok(certs)
}

/// The private key in a PEM file.
pub fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| file_error("TLS private key", path, e))
}

/// The rustls server configuration of `tls`: its certificate, and client certificates required
/// when `client_ca` is set.
pub fn server_config(tls: &ServerTls) -> Result<rustls::ServerConfig, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = match &tls.client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in load_certs("client CA certificate", ca)? {
                roots
                    .add(cert)
                    .map_err(|e| file_error("client CA certificate", ca, e))?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .map_err(|e| TlsError::Config(e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    builder
        .with_single_cert(
            load_certs("TLS certificate", &tls.cert)?,
            load_key(&tls.key)?,
        )
        .map_err(|e| TlsError::Config(e.to_string()))
}

/// An HTTP client builder that trusts `ca` (besides the usual roots) and presents `identity`
/// (a PEM certificate and key) when the server asks for a client certificate.
pub fn client_builder(
    ca: Option<&Path>,
    identity: Option<(&Path, &Path)>,
) -> Result<reqwest::ClientBuilder, TlsError> {
    let mut builder = reqwest::Client::builder().use_rustls_tls();
    if let Some(ca) = ca {
        let pem = std::fs::read(ca).map_err(|e| file_error("CA certificate", ca, e))?;
        for cert in reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| file_error("CA certificate", ca, e))?
        {
            builder = builder.add_root_certificate(cert);
        }
    }
    if let Some((cert, key)) = identity {
        let mut pem = std::fs::read(cert).map_err(|e| file_error("client certificate", cert, e))?;
        pem.extend(std::fs::read(key).map_err(|e| file_error("client key", key, e))?);
        let identity = reqwest::Identity::from_pem(&pem)
            .map_err(|e| file_error("client certificate", cert, e))?;
        builder = builder.identity(identity);
    }
    Ok(builder)
}

/// What `convoy tls init` wrote.
#[derive(Clone, Debug)]
pub struct DevPki {
    /// The CA's certificate: what clients and servers trust (`--ca-file`, `tls_ca_file`).
    pub ca: PathBuf,
    /// The servers' certificate (valid for every host given, for server and client use).
    pub cert: PathBuf,
    /// Its private key (mode 0600).
    pub key: PathBuf,
}

/// Writes a development CA (`ca.pem`, `ca-key.pem`) and a certificate for the servers
/// (`server.pem`, `server-key.pem`) valid for `hosts` (names or IP addresses) under `dir`.
/// Keys are written 0600. For development and tests: production certificates come from your CA.
pub fn init_dev_pki(dir: &Path, hosts: &[String]) -> Result<DevPki, TlsError> {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
        KeyUsagePurpose,
    };
    let fail = |what: &str| {
        let what = what.to_string();
        move |e: rcgen::Error| TlsError::Generate {
            what: what.clone(),
            reason: e.to_string(),
        }
    };
    std::fs::create_dir_all(dir).map_err(|e| file_error("TLS directory", dir, e))?;
    let ca_key = KeyPair::generate().map_err(fail("the CA key"))?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(fail("the CA"))?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "convoy development CA");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca = ca_params.self_signed(&ca_key).map_err(fail("the CA"))?;

    let key = KeyPair::generate().map_err(fail("the server key"))?;
    let mut params =
        CertificateParams::new(hosts.to_vec()).map_err(fail("the server certificate"))?;
    params
        .distinguished_name
        .push(DnType::CommonName, "convoy server");
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    let cert = params
        .signed_by(&key, &ca, &ca_key)
        .map_err(fail("the server certificate"))?;

    let pki = DevPki {
        ca: dir.join("ca.pem"),
        cert: dir.join("server.pem"),
        key: dir.join("server-key.pem"),
    };
    write_file(&pki.ca, ca.pem().as_bytes(), 0o644)?;
    write_file(
        &dir.join("ca-key.pem"),
        ca_key.serialize_pem().as_bytes(),
        0o600,
    )?;
    write_file(&pki.cert, cert.pem().as_bytes(), 0o644)?;
    write_file(&pki.key, key.serialize_pem().as_bytes(), 0o600)?;
    Ok(pki)
}

fn write_file(path: &Path, bytes: &[u8], mode: u32) -> Result<(), TlsError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|e| file_error("output file", path, e))?;
    file.write_all(bytes)
        .map_err(|e| file_error("output file", path, e))
}

/// `convoy tls` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum TlsCommand {
    /// Write a development CA and a server certificate under DIR (ca.pem, server.pem,
    /// server-key.pem; keys 0600).
    Init {
        /// Where to write the files.
        dir: PathBuf,
        /// A host name or IP address the servers are reached at (repeatable).
        #[arg(long = "host", default_values_t = [String::from("127.0.0.1"), String::from("localhost")])]
        hosts: Vec<String>,
    },
}

/// Runs a `convoy tls` subcommand.
pub fn run(command: TlsCommand) -> Result<(), TlsError> {
    match command {
        TlsCommand::Init { dir, hosts } => {
            let pki = init_dev_pki(&dir, &hosts)?;
            println!("CA certificate      {}", pki.ca.display());
            println!(
                "server certificate  {} (for {})",
                pki.cert.display(),
                hosts.join(", ")
            );
            println!("server key          {}", pki.key.display());
            println!(
                "servers: tls_cert_file, tls_key_file, tls_ca_file = these; clients: --ca-file {}",
                pki.ca.display()
            );
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dev_pki_makes_a_server_config_and_keys_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let pki = init_dev_pki(dir.path(), &["127.0.0.1".into(), "localhost".into()]).unwrap();
        let mode = std::fs::metadata(&pki.key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let tls = ServerTls {
            cert: pki.cert.clone(),
            key: pki.key.clone(),
            client_ca: Some(pki.ca.clone()),
            ca: Some(pki.ca.clone()),
        };
        server_config(&tls).unwrap();
        client_builder(Some(&pki.ca), Some((&pki.cert, &pki.key)))
            .unwrap()
            .build()
            .unwrap();
    }

    #[test]
    fn a_key_that_does_not_match_or_a_missing_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let a = init_dev_pki(&dir.path().join("a"), &["127.0.0.1".into()]).unwrap();
        let b = init_dev_pki(&dir.path().join("b"), &["127.0.0.1".into()]).unwrap();
        let mismatched = ServerTls {
            cert: a.cert.clone(),
            key: b.key.clone(),
            client_ca: None,
            ca: None,
        };
        assert!(matches!(
            server_config(&mismatched),
            Err(TlsError::Config(_))
        ));
        let missing = ServerTls {
            cert: dir.path().join("nope.pem"),
            ..mismatched
        };
        let e = server_config(&missing).unwrap_err().to_string();
        assert!(e.contains("nope.pem"), "{e}");
    }
}
