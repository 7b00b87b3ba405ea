//! Logins from an identity provider: JWTs verified against a JWKS file.
//!
//! A team with an identity provider (Keycloak, Okta, Entra ID, Auth0, Dex …) points the
//! replicas at a JSON Web Key Set (RFC 7517 §5) holding the provider's public keys; clients
//! send the provider's JWT (RFC 7519) as their bearer token, with no Lake login. A token
//! is accepted when its signature verifies under the key its header names (`kid`; any key
//! of the set when it names none) with an asymmetric algorithm that key allows (RS*, PS*,
//! ES256/ES384, EdDSA: never `none` or HMAC, so no key confusion), it has not expired
//! (`exp` required; 60 s leeway for clock skew) and is not yet to come (`nbf`), and, when
//! configured, its `iss` and `aud` are present and the expected ones. The principal is the claim named
//! by `--jwt-user-claim` (default `sub`), which must be a valid Lake user name; its rights
//! come from grants ([`crate::access`]) like any user's. Verification follows the
//! `jsonwebtoken` crate.

use std::path::Path;

use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use tonic::Status;

use crate::QueryError;

/// Largest JWT accepted, in bytes (the `authorization` header is bounded anyway).
const TOKEN_BYTES_MAX: usize = 4096;

/// How JWTs are checked: where the keys come from and which claims must match.
#[derive(Clone, Debug, Default)]
pub struct JwtSettings {
    /// Required `iss` claim, if any.
    pub issuer: Option<String>,
    /// Required `aud` claim (one of a token's audiences), if any.
    pub audience: Option<String>,
    /// The claim that names the user (default `sub`).
    pub user_claim: String,
}

/// One verification key of the set.
struct Key {
    id: Option<String>,
    key: DecodingKey,
    algorithms: Vec<Algorithm>,
}

/// The keys of a JWKS file and the settings tokens are checked with.
pub struct Jwks {
    keys: Vec<Key>,
    settings: JwtSettings,
}

impl std::fmt::Debug for Jwks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jwks")
            .field("keys", &self.keys.len())
            .field("settings", &self.settings)
            .finish()
    }
}

impl Jwks {
    /// Reads a JWKS file (`{"keys": [JWK, …]}`).
    ///
    /// # Errors
    /// [`QueryError::NotFound`] for a missing file; [`QueryError::InvalidArgument`] naming
    /// the file and what is wrong (not a JWKS, a symmetric or unusable key, no key).
    pub fn load(path: &Path, settings: JwtSettings) -> Result<Self, QueryError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| QueryError::NotFound(format!("JWKS file {}: {e}", path.display())))?;
        Self::parse(&text, settings)
            .map_err(|e| QueryError::InvalidArgument(format!("JWKS file {}: {e}", path.display())))
    }

    /// Parses the text of a JWKS file (see [`Jwks::load`]).
    ///
    /// # Errors
    /// A message saying what is wrong.
    pub fn parse(text: &str, mut settings: JwtSettings) -> Result<Self, String> {
        let set: JwkSet = serde_json::from_str(text)
            .map_err(|e| format!("not a JSON Web Key Set ({{\"keys\": [...]}}): {e}"))?;
        let mut keys = Vec::with_capacity(set.keys.len());
        for (i, jwk) in set.keys.iter().enumerate() {
            let name = jwk
                .common
                .key_id
                .as_deref()
                .map_or_else(|| format!("key {i}"), |kid| format!("key {kid:?}"));
            let family: &[Algorithm] = match &jwk.algorithm {
                AlgorithmParameters::RSA(_) => &[
                    Algorithm::RS256,
                    Algorithm::RS384,
                    Algorithm::RS512,
                    Algorithm::PS256,
                    Algorithm::PS384,
                    Algorithm::PS512,
                ],
                AlgorithmParameters::EllipticCurve(_) => &[Algorithm::ES256, Algorithm::ES384],
                AlgorithmParameters::OctetKeyPair(_) => &[Algorithm::EdDSA],
                AlgorithmParameters::OctetKey(_) => {
                    return Err(format!(
                        "{name} is a symmetric (oct) key: a JWKS for Lake holds an identity provider's public keys (RSA, EC or OKP)"
                    ));
                }
                _ => return Err(format!("{name} has a key type Lake cannot use")),
            };
            let algorithms = match jwk.common.key_algorithm {
                None => family.to_vec(),
                Some(declared) => {
                    let algorithm = algorithm_of(declared)
                        .filter(|a| family.contains(a))
                        .ok_or_else(|| {
                            format!(
                                "{name} declares alg {declared}, which does not fit its key type"
                            )
                        })?;
                    vec![algorithm]
                }
            };
            let key = DecodingKey::from_jwk(jwk).map_err(|e| format!("{name}: {e}"))?;
            keys.push(Key {
                id: jwk.common.key_id.clone(),
                key,
                algorithms,
            });
        }
        if keys.is_empty() {
            return Err("it holds no key".into());
        }
        if settings.user_claim.is_empty() {
            settings.user_claim = "sub".into();
        }
        Ok(Self { keys, settings })
    }

    /// Whether `token` has a JWT's shape (three base64url parts, a JSON header first), so
    /// it is checked here rather than as a Lake token.
    pub fn looks_like_jwt(token: &str) -> bool {
        token.starts_with("eyJ") && token.split('.').count() == 3
    }

    /// Verifies `token` (see the module doc) and returns the user it names.
    ///
    /// # Errors
    /// `UNAUTHENTICATED` saying what failed: the signature, the key id, the algorithm,
    /// expiry, issuer, audience, or a user claim that is missing or not a Lake user name.
    pub fn verify(&self, token: &str) -> Result<String, Status> {
        let refused = |why: String| Status::unauthenticated(format!("JWT refused: {why}"));
        if token.len() > TOKEN_BYTES_MAX {
            return Err(refused(format!("over {TOKEN_BYTES_MAX} bytes")));
        }
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| refused(format!("its header does not decode ({e})")))?;
        let candidates: Vec<&Key> = match &header.kid {
            Some(kid) => self
                .keys
                .iter()
                .filter(|k| k.id.as_deref() == Some(kid.as_str()))
                .collect(),
            None => self.keys.iter().collect(),
        };
        if candidates.is_empty() {
            return Err(refused(format!(
                "it names key id {:?}, which the JWKS file does not hold (rotated keys: update the file and restart the replicas)",
                header.kid.as_deref().map(lake_core::registry::shorten)
            )));
        }
        let mut last = None;
        for key in candidates {
            if !key.algorithms.contains(&header.alg) {
                last = Some(format!(
                    "alg {:?} is not one its key allows ({:?})",
                    header.alg, key.algorithms
                ));
                continue;
            }
            let mut validation = Validation::new(header.alg);
            validation.validate_nbf = true;
            // A configured issuer or audience must be present, not only right when present.
            let mut required = vec!["exp"];
            if let Some(issuer) = &self.settings.issuer {
                validation.set_issuer(&[issuer]);
                required.push("iss");
            }
            if self.settings.audience.is_some() {
                required.push("aud");
            }
            validation.set_required_spec_claims(&required);
            match &self.settings.audience {
                Some(audience) => validation.set_audience(&[audience]),
                None => validation.validate_aud = false,
            }
            match jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(
                token,
                &key.key,
                &validation,
            ) {
                Ok(data) => return self.user_of(&data.claims).map_err(refused),
                Err(e) => last = Some(explain(e.kind(), &self.settings)),
            }
        }
        Err(refused(last.unwrap_or_else(|| "no key verifies it".into())))
    }

    fn user_of(
        &self,
        claims: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<String, String> {
        let claim = &self.settings.user_claim;
        let user = claims
            .get(claim)
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| format!("it has no string claim {claim:?} to name the user"))?;
        crate::auth::validate_user_name(user).map_err(|e| format!("claim {claim:?}: {e}"))?;
        Ok(user.to_string())
    }
}

fn algorithm_of(declared: KeyAlgorithm) -> Option<Algorithm> {
    declared.to_string().parse().ok()
}

fn explain(kind: &jsonwebtoken::errors::ErrorKind, settings: &JwtSettings) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match kind {
        ErrorKind::ExpiredSignature => {
            "it has expired: get a new one from the identity provider".into()
        }
        ErrorKind::ImmatureSignature => "it is not valid yet (nbf)".into(),
        ErrorKind::InvalidSignature => "its signature does not verify".into(),
        ErrorKind::InvalidIssuer => format!(
            "its issuer is not {:?}",
            settings.issuer.as_deref().unwrap_or_default()
        ),
        ErrorKind::InvalidAudience => format!(
            "its audience is not {:?}",
            settings.audience.as_deref().unwrap_or_default()
        ),
        ErrorKind::MissingRequiredClaim(claim) => format!("it has no {claim:?} claim"),
        ErrorKind::InvalidAlgorithm => "its algorithm is not allowed".into(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    fn b64(json: &str) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    /// An RSA public key (n, e) from RFC 7517 Appendix A.1.
    const RSA_JWKS: &str = r#"{"keys":[{"kty":"RSA","kid":"2011-04-29","alg":"RS256",
      "n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
      "e":"AQAB"}]}"#;

    fn jwks() -> Jwks {
        Jwks::parse(RSA_JWKS, JwtSettings::default()).expect("parses")
    }

    #[test]
    fn unsigned_hmac_unknown_key_and_garbage_tokens_are_refused_saying_why() {
        let jwks = jwks();
        let claims = b64(r#"{"sub":"ada","exp":99999999999}"#);
        let none = format!("{}.{claims}.", b64(r#"{"alg":"none","typ":"JWT"}"#));
        let hmac = format!(
            "{}.{claims}.AAAA",
            b64(r#"{"alg":"HS256","kid":"2011-04-29"}"#)
        );
        let other_kid = format!("{}.{claims}.AAAA", b64(r#"{"alg":"RS256","kid":"other"}"#));
        let forged = format!(
            "{}.{claims}.AAAA",
            b64(r#"{"alg":"RS256","kid":"2011-04-29"}"#)
        );
        for (token, why) in [
            (none.as_str(), "header does not decode"),
            (hmac.as_str(), "not one its key allows"),
            (other_kid.as_str(), "does not hold"),
            (forged.as_str(), "signature does not verify"),
            ("eyJ.x.y", "header does not decode"),
        ] {
            let e = jwks.verify(token).expect_err(token);
            assert_eq!(e.code(), tonic::Code::Unauthenticated);
            assert!(e.message().contains(why), "{token}: {}", e.message());
        }
        assert!(Jwks::looks_like_jwt(&forged));
        assert!(!Jwks::looks_like_jwt("lakeapi.svc.secret"));
        assert!(!Jwks::looks_like_jwt("lake1.ada.1.tag"));
    }

    #[test]
    fn key_sets_without_usable_public_keys_are_refused() {
        let settings = JwtSettings::default;
        for (text, why) in [
            (r#"{"keys":[]}"#, "no key"),
            (r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#, "symmetric"),
            ("not json", "not a JSON Web Key Set"),
        ] {
            let e = Jwks::parse(text, settings()).expect_err(text);
            assert!(e.contains(why), "{text}: {e}");
        }
        let mismatched = RSA_JWKS.replace("\"RS256\"", "\"ES256\"");
        let e = Jwks::parse(&mismatched, settings()).expect_err("alg of another family");
        assert!(e.contains("does not fit"), "{e}");
    }
}
