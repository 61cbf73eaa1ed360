//! TLS to PostgreSQL as libpq's `sslmode` asks for it, through rustls.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::error::{FailureKind, PgFailure};
use super::url::{PgTarget, SslMode};

/// The rustls configuration `sslmode` asks for; `None` for plain TCP.
pub(super) fn tls_config(target: &PgTarget) -> Result<Option<rustls::ClientConfig>, PgFailure> {
    let tls_error = |detail: String| PgFailure::new(FailureKind::Tls, detail);
    let verify = match (target.ssl, &target.root_cert) {
        (SslMode::Disable, _) => return Ok(None),
        (SslMode::Prefer | SslMode::Require, None) => Verify::Nothing,
        (SslMode::Prefer | SslMode::Require | SslMode::VerifyCa, _) => Verify::Chain,
        (SslMode::VerifyFull, _) => Verify::Full,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error(e.to_string()))?;
    let config = match verify {
        Verify::Nothing => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(LibpqVerifier {
                chain: None,
                provider,
            }))
            .with_no_client_auth(),
        Verify::Chain | Verify::Full => {
            let roots = Arc::new(roots(target.root_cert.as_ref()).map_err(tls_error)?);
            let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
                roots,
                provider.clone(),
            )
            .build()
            .map_err(|e| tls_error(e.to_string()))?;
            if verify == Verify::Full {
                builder.with_webpki_verifier(webpki).with_no_client_auth()
            } else {
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(LibpqVerifier {
                        chain: Some(webpki),
                        provider,
                    }))
                    .with_no_client_auth()
            }
        }
    };
    Ok(Some(config))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verify {
    Nothing,
    Chain,
    Full,
}

/// The CA certificates to trust: `sslrootcert`'s, or the system's.
fn roots(file: Option<&PathBuf>) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match file {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            for cert in certs {
                let cert = cert.map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
                store
                    .add(cert)
                    .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            }
            if store.is_empty() {
                return Err(format!(
                    "sslrootcert {} holds no PEM certificate",
                    path.display()
                ));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                return Err(
                    "no CA certificates found on this system: give sslrootcert=FILE".into(),
                );
            }
        }
    }
    Ok(store)
}

/// The certificate checks libpq makes short of `verify-full`: none for `sslmode=require` (and
/// `prefer`) without a root certificate (the connection is encrypted, the certificate not
/// checked), or the chain to a trusted CA without the name for `verify-ca`. The handshake's
/// signatures are checked either way.
#[derive(Debug)]
struct LibpqVerifier {
    /// `verify-ca`'s chain check; `None` checks no certificate.
    chain: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for LibpqVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
