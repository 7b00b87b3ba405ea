//! Who is calling: Flight SQL authentication.
//!
//! Flight SQL clients log in with the Flight `Handshake` call carrying HTTP Basic
//! credentials (`authorization: Basic base64(NAME:PASSWORD)`, RFC 7617; the Go-based ADBC
//! driver sends the base64 without `=` padding, so both forms are accepted) and get a
//! bearer token back in the `authorization: Bearer TOKEN` response header (Arrow Flight
//! "Authentication", as ADBC's `username`/`password` options and pyarrow's
//! `authenticate_basic_token` expect). Every other call carries that header; a call
//! without it, or with a token that is forged, altered or expired, is refused with
//! `UNAUTHENTICATED` saying which, before it reaches the service ([`AuthLayer`]).
//!
//! Principals come from a users file ([`Users`]): one `NAME:PHC-HASH` line per user, the
//! hash argon2id in the PHC string format (never a password), written by `lake user add`.
//! Tokens are `lake1.NAME.EXPIRY_MS.TAG`, TAG an HMAC-SHA256 under the replicas' shared
//! ticket key, so a token from one replica is accepted by all of them until it expires.
//!
//! A replica without a users file authenticates nobody and accepts every call: the
//! zero-configuration loopback demo. The CLI refuses to start it on any other address
//! unless told so explicitly.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use tonic::Status;

use crate::QueryError;
use crate::ticket::now_ms;

/// The gRPC path of Flight's `Handshake`, the one call that needs no token.
pub const HANDSHAKE_PATH: &str = "/arrow.flight.protocol.FlightService/Handshake";
/// How long a token is valid by default.
pub const TOKEN_TTL_DEFAULT: Duration = Duration::from_secs(12 * 3600);
/// Longest user name, in bytes; names are ASCII letters, digits, `_`, `-`, `.` and `@`.
pub const USER_NAME_MAX: usize = lake_core::registry::PRINCIPAL_LEN_MAX;
/// Longest password accepted, in bytes.
pub const PASSWORD_MAX: usize = 1024;
/// Longest `authorization` header read, in bytes.
const HEADER_MAX: usize = 4096;
/// Token format version.
const TOKEN_PREFIX: &str = "lake1";
/// What an API token starts with: `lakeapi.NAME.SECRET`.
const API_TOKEN_PREFIX: &str = "lakeapi";
/// How a users file marks an API token's hash: `NAME:sha256:HEX`.
const API_HASH_PREFIX: &str = "sha256:";

/// Who made a call, as the request's extension: the user a valid token names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    /// The user name.
    pub name: String,
    /// A superuser of the users file (see [`crate::access`]). Never a JWT's user: an
    /// identity provider names users, it does not make superusers.
    pub superuser: bool,
}

/// The users a replica knows: name → argon2id PHC hash of a password, or `sha256:HEX` of
/// an API token (a service's static credential: 256 random bits, so a fast hash keeps it
/// as safe as a slow one keeps a password); and which of them are superusers (see
/// [`crate::access`]).
#[derive(Clone, Debug, Default)]
pub struct Users {
    hashes: BTreeMap<String, String>,
    admins: std::collections::BTreeSet<String>,
}

/// The word that marks a superuser in a users file line: `NAME:HASH admin`.
const ADMIN_MARK: &str = "admin";

/// Checks a user name: 1 to [`USER_NAME_MAX`] ASCII letters, digits, `_`, `-`, `.` or `@`.
///
/// # Errors
/// [`QueryError::InvalidArgument`] naming the allowed form.
pub fn validate_user_name(name: &str) -> Result<(), QueryError> {
    // One rule for logins and grants (`lake_core::registry::validate_principal`).
    lake_core::registry::validate_principal(name).map_err(|_| {
        QueryError::InvalidArgument(format!(
            "invalid user name {:?}: use 1 to {USER_NAME_MAX} ASCII letters, digits, '_', '-', '.' or '@'",
            lake_core::registry::shorten(name)
        ))
    })
}

/// The argon2id hash (PHC string, the crate's default parameters: 19 MiB, 2 passes) of
/// `password` under a fresh random salt.
///
/// # Errors
/// [`QueryError::InvalidArgument`] for an empty password or one over [`PASSWORD_MAX`]
/// bytes.
pub fn hash_password(password: &str) -> Result<String, QueryError> {
    if password.is_empty() || password.len() > PASSWORD_MAX {
        return Err(QueryError::InvalidArgument(format!(
            "a password has 1 to {PASSWORD_MAX} bytes"
        )));
    }
    let salt = SaltString::encode_b64(&rand::random::<[u8; 16]>())
        .map_err(|e| QueryError::Execution(format!("salt: {e}")))?;
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| QueryError::Execution(format!("hashing the password: {e}")))
}

impl Users {
    /// Reads a users file: one `NAME:HASH` per line, HASH an argon2id PHC string of a
    /// password or `sha256:` and 64 hex digits of an API token, followed by ` admin` for a
    /// superuser (blank lines and `#` comments ignored).
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] naming the file and line of a malformed entry or
    /// a hash that is not a PHC string; [`QueryError::NotFound`] for a missing file.
    pub fn load(path: &Path) -> Result<Self, QueryError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| QueryError::NotFound(format!("users file {}: {e}", path.display())))?;
        Self::parse(&text)
            .map_err(|e| QueryError::InvalidArgument(format!("users file {}: {e}", path.display())))
    }

    /// Parses the text of a users file (see [`Users::load`]).
    ///
    /// # Errors
    /// A message naming the line that is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut users = Self::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let (Some(entry), mark, None) = (words.next(), words.next(), words.next()) else {
                return Err(format!("line {}: expected NAME:HASH [admin]", n + 1));
            };
            match mark {
                None => {}
                Some(ADMIN_MARK) => {}
                Some(other) => {
                    return Err(format!(
                        "line {}: {:?} after the hash; the only word allowed there is admin",
                        n + 1,
                        lake_core::registry::shorten(other)
                    ));
                }
            }
            let Some((name, hash)) = entry.split_once(':') else {
                return Err(format!("line {}: expected NAME:HASH [admin]", n + 1));
            };
            validate_user_name(name).map_err(|e| format!("line {}: {e}", n + 1))?;
            match hash.strip_prefix(API_HASH_PREFIX) {
                Some(hex) if lake_sdk::file::is_sha256_hex(hex) => {}
                Some(_) => {
                    return Err(format!(
                        "line {}: an API token's hash is sha256: and 64 lowercase hex digits",
                        n + 1
                    ));
                }
                None => {
                    PasswordHash::new(hash)
                        .map_err(|e| format!("line {}: not a PHC password hash ({e})", n + 1))?;
                }
            }
            users.hashes.insert(name.to_string(), hash.to_string());
            if mark.is_some() {
                users.admins.insert(name.to_string());
            }
        }
        Ok(users)
    }

    /// The file text of these users.
    pub fn to_text(&self) -> String {
        let mut text = String::from(
            "# Lake users: NAME:argon2id hash of a password, or NAME:sha256:hash of an API token, then `admin` for a superuser (written by `lake user add`)\n",
        );
        for (name, hash) in &self.hashes {
            let mark = if self.admins.contains(name) {
                " admin"
            } else {
                ""
            };
            text.push_str(&format!("{name}:{hash}{mark}\n"));
        }
        text
    }

    /// Makes `name` a superuser or not (it holds every privilege everywhere; see
    /// [`crate::access`]). A name without credentials can never log in, but a token the
    /// server mints for it in process (the demo loader's) is a superuser's.
    pub fn set_admin(&mut self, name: &str, admin: bool) {
        if admin {
            self.admins.insert(name.to_string());
        } else {
            self.admins.remove(name);
        }
    }

    /// Whether any user is a superuser.
    pub fn has_admin(&self) -> bool {
        !self.admins.is_empty()
    }

    /// Whether `name` is a superuser.
    pub fn is_admin(&self, name: &str) -> bool {
        self.admins.contains(name)
    }

    /// Adds `name` with `password`, or sets a new password for it.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] for a bad name or password.
    pub fn set(&mut self, name: &str, password: &str) -> Result<(), QueryError> {
        validate_user_name(name)?;
        self.hashes
            .insert(name.to_string(), hash_password(password)?);
        Ok(())
    }

    /// Adds `name` as a service with a new random API token, or gives it a new one (the
    /// old one stops working where the file is reloaded). Returns the token,
    /// `lakeapi.NAME.SECRET`: the file keeps only its SHA-256.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] for a bad name.
    pub fn set_api_token(&mut self, name: &str) -> Result<String, QueryError> {
        use base64::Engine as _;
        validate_user_name(name)?;
        let secret =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>());
        let token = format!("{API_TOKEN_PREFIX}.{name}.{secret}");
        self.hashes.insert(name.to_string(), api_hash(&token));
        Ok(token)
    }

    /// The name of the service whose API token `token` is, when it is one in this file.
    pub fn api_token_owner(&self, token: &str) -> Option<&str> {
        // The secret is unpadded base64url (no '.'); the name may hold '.'.
        let (name, _secret) = token
            .strip_prefix(API_TOKEN_PREFIX)?
            .strip_prefix('.')?
            .rsplit_once('.')?;
        let (owner, stored) = self.hashes.get_key_value(name)?;
        let given = api_hash(token);
        // Compares digests of the whole token: timing tells nothing about the secret.
        let same = stored.len() == given.len()
            && stored
                .bytes()
                .zip(given.bytes())
                .fold(0u8, |diff, (a, b)| diff | (a ^ b))
                == 0;
        same.then_some(owner.as_str())
    }

    /// Whether `password` is `name`'s (for a service, its API token, so clients that can
    /// only send a user name and password log in with it). An unknown name costs the same
    /// hashing work as a known one, so timing does not tell which names exist.
    pub fn verify(&self, name: &str, password: &str) -> bool {
        static UNKNOWN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        if self
            .hashes
            .get(name)
            .is_some_and(|h| h.starts_with(API_HASH_PREFIX))
        {
            return self.api_token_owner(password) == Some(name);
        }
        let known = self.hashes.get(name);
        let hash = match known {
            Some(hash) => hash.as_str(),
            None => UNKNOWN
                .get_or_init(|| hash_password("no such user").unwrap_or_default())
                .as_str(),
        };
        let matches = PasswordHash::new(hash).is_ok_and(|parsed| {
            argon2::Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        });
        known.is_some() && matches
    }

    /// How many users there are.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Whether `name` is a user (or service) of the file.
    pub fn contains(&self, name: &str) -> bool {
        self.hashes.contains_key(name)
    }
}

/// `sha256:HEX` of an API token, as a users file keeps it.
fn api_hash(token: &str) -> String {
    use sha2::Digest as _;
    let digest = Sha256::digest(token.as_bytes());
    format!("{API_HASH_PREFIX}{}", lake_sdk::file::hex(&digest))
}

/// Logs users in and checks their tokens.
#[derive(Clone)]
pub struct Authenticator {
    users: Arc<Users>,
    jwks: Option<Arc<crate::jwt::Jwks>>,
    mac: Hmac<Sha256>,
    ttl: Duration,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("users", &self.users.len())
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl Authenticator {
    /// The users it logs in.
    pub fn users(&self) -> &Users {
        &self.users
    }

    /// Whether `name` can ever log in here: a user of the users file, or any name when an
    /// identity provider's JWTs are accepted (their users are listed nowhere).
    pub fn may_log_in(&self, name: &str) -> bool {
        self.jwks.is_some() || self.users.contains(name)
    }

    /// Also accepts JWTs that verify against `jwks` (see [`crate::jwt`]).
    pub fn with_jwks(mut self, jwks: Arc<crate::jwt::Jwks>) -> Self {
        self.jwks = Some(jwks);
        self
    }

    /// Logs in `users`, signing tokens valid for `ttl` with `key` (the replicas' shared
    /// ticket key bytes).
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] if HMAC refuses the key.
    pub fn new(users: Users, key: &[u8], ttl: Duration) -> Result<Self, QueryError> {
        let mac = Hmac::<Sha256>::new_from_slice(key)
            .map_err(|e| QueryError::InvalidArgument(format!("token key: {e}")))?;
        Ok(Self {
            users: Arc::new(users),
            jwks: None,
            mac,
            ttl,
        })
    }

    fn tag(&self, name: &str, expiry_ms: u64) -> String {
        let mut mac = self.mac.clone();
        mac.update(format!("{TOKEN_PREFIX}|{name}|{expiry_ms}").as_bytes());
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// A token for `name`, valid until `expiry_ms` (Unix epoch milliseconds).
    pub fn token(&self, name: &str, expiry_ms: u64) -> String {
        format!(
            "{TOKEN_PREFIX}.{name}.{expiry_ms}.{}",
            self.tag(name, expiry_ms)
        )
    }

    /// Checks the `authorization` header of a Handshake: HTTP Basic credentials, base64
    /// with or without padding. Returns the bearer token for the user.
    ///
    /// # Errors
    /// `UNAUTHENTICATED` for no or malformed credentials, or a wrong name or password
    /// (one message for both, not telling which).
    pub fn login(&self, authorization: Option<&str>) -> Result<String, Status> {
        let (name, password) = basic_credentials(authorization)?;
        if !self.users.verify(&name, &password) {
            tracing::info!(user = %lake_core::registry::shorten(&name), "login refused");
            return Err(Status::unauthenticated("wrong user name or password"));
        }
        let expiry =
            now_ms().saturating_add(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX));
        Ok(self.token(&name, expiry))
    }

    /// The principal of the `authorization: Bearer TOKEN` header of a call: TOKEN is a
    /// login's token, or a service's API token from the users file (which never expires;
    /// replace it with `lake user add NAME --api-token` and restart the replicas).
    ///
    /// # Errors
    /// `UNAUTHENTICATED` saying whether the header is missing, the token malformed or
    /// not issued by this deployment (forged or altered), or expired.
    pub fn check(&self, authorization: Option<&str>) -> Result<Principal, Status> {
        let Some(header) = authorization else {
            return Err(Status::unauthenticated(
                "this Lake server requires a login: send HTTP Basic credentials with a Flight Handshake (ADBC: username and password options; the lake CLI: LAKE_USER and LAKE_PASSWORD) and the bearer token it returns with every call, or a service's API token as the bearer token (lake CLI: LAKE_TOKEN)",
            ));
        };
        let token = credentials(header, "Bearer").ok_or_else(|| {
                Status::unauthenticated(
                    "the authorization header is not a bearer token: log in with a Flight Handshake first",
                )
            })?;
        if crate::jwt::Jwks::looks_like_jwt(token.trim()) {
            return match &self.jwks {
                Some(jwks) => jwks.verify(token.trim()).map(|name| Principal {
                    name,
                    superuser: false,
                }),
                None => Err(Status::unauthenticated(
                    "a JWT, but this deployment accepts none (no --jwks-file): log in with a Flight Handshake",
                )),
            };
        }
        if token.trim().starts_with(API_TOKEN_PREFIX) {
            return self
                .users
                .api_token_owner(token.trim())
                .map(|name| self.user(name))
                .ok_or_else(|| {
                    Status::unauthenticated(
                        "invalid API token: not in this replica's users file (replaced or removed?), or altered",
                    )
                });
        }
        let forged = || {
            Status::unauthenticated(
                "invalid token: not issued by this Lake deployment, or altered; log in again",
            )
        };
        // lake1.NAME.EXPIRY.TAG, where NAME may hold '.': read from the end.
        let rest = token
            .trim()
            .strip_prefix(TOKEN_PREFIX)
            .and_then(|rest| rest.strip_prefix('.'))
            .ok_or_else(forged)?;
        let mut back = rest.rsplitn(3, '.');
        let (Some(tag), Some(expiry), Some(name)) = (back.next(), back.next(), back.next()) else {
            return Err(forged());
        };
        let expiry_ms: u64 = expiry.parse().map_err(|_| forged())?;
        let given = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| forged())?;
        let mut mac = self.mac.clone();
        mac.update(format!("{TOKEN_PREFIX}|{name}|{expiry_ms}").as_bytes());
        mac.verify_slice(&given).map_err(|_| forged())?;
        if now_ms() >= expiry_ms {
            return Err(Status::unauthenticated(
                "the token has expired: log in again",
            ));
        }
        Ok(self.user(name))
    }

    /// The principal of users-file user (or in-process principal) `name`.
    fn user(&self, name: &str) -> Principal {
        Principal {
            name: name.to_string(),
            superuser: self.users.is_admin(name),
        }
    }
}

/// What follows the authentication `scheme` in an `authorization` header value, whose
/// scheme name is case-insensitive (RFC 7235 section 2.1); `None` for another scheme.
fn credentials<'a>(header: &'a str, scheme: &str) -> Option<&'a str> {
    let (given, rest) = header.split_once(' ')?;
    given.eq_ignore_ascii_case(scheme).then_some(rest)
}

/// The user name and password of an `authorization: Basic …` header (RFC 7617), base64
/// with or without `=` padding.
///
/// # Errors
/// `UNAUTHENTICATED` naming what is wrong with the header.
pub fn basic_credentials(authorization: Option<&str>) -> Result<(String, String), Status> {
    let header = authorization.ok_or_else(|| {
        Status::unauthenticated(
            "log in with HTTP Basic credentials: authorization: Basic base64(NAME:PASSWORD)",
        )
    })?;
    if header.len() > HEADER_MAX {
        return Err(Status::unauthenticated(format!(
            "authorization header over {HEADER_MAX} bytes"
        )));
    }
    let encoded = credentials(header, "Basic")
        .ok_or_else(|| {
            Status::unauthenticated(
                "the Handshake's authorization header is not HTTP Basic: send Basic base64(NAME:PASSWORD)",
            )
        })?
        .trim();
    let decoded = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(encoded.trim_end_matches('='))
        .map_err(|_| Status::unauthenticated("the Basic credentials are not base64"))?;
    let text = String::from_utf8(decoded)
        .map_err(|_| Status::unauthenticated("the Basic credentials are not UTF-8"))?;
    let (name, password) = text
        .split_once(':')
        .ok_or_else(|| Status::unauthenticated("the Basic credentials are not NAME:PASSWORD"))?;
    Ok((name.to_string(), password.to_string()))
}

/// Refuses every call but `Handshake` that carries no valid token (see the module doc),
/// and hands the calls it lets through their [`Principal`] as a request extension.
#[derive(Clone, Debug)]
pub struct AuthLayer {
    auth: Option<Authenticator>,
}

impl AuthLayer {
    /// Checks tokens with `auth`; `None` lets every call through (no users configured).
    pub fn new(auth: Option<Authenticator>) -> Self {
        Self { auth }
    }
}

impl<S> tower_layer::Layer<S> for AuthLayer {
    type Service = Auth<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Auth {
            inner,
            auth: self.auth.clone(),
        }
    }
}

/// The service [`AuthLayer`] makes.
#[derive(Clone, Debug)]
pub struct Auth<S> {
    inner: S,
    auth: Option<Authenticator>,
}

impl<S, ReqBody, ResBody> tower_service::Service<http::Request<ReqBody>> for Auth<S>
where
    S: tower_service::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    ResBody: Default + Send + 'static,
    S::Error: Send + 'static,
{
    type Response = http::Response<ResBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<ReqBody>) -> Self::Future {
        if let Some(auth) = &self.auth
            && request.uri().path() != HANDSHAKE_PATH
        {
            let header = request
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok());
            match auth.check(header) {
                Ok(principal) => {
                    request.extensions_mut().insert(principal);
                }
                Err(status) => {
                    let response = status.into_http::<ResBody>();
                    return Box::pin(async move { Ok(response) });
                }
            }
        }
        let response = self.inner.call(request);
        Box::pin(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn authenticator(ttl: Duration) -> Authenticator {
        let mut users = Users::default();
        users.set("ada", "correct horse").expect("set");
        Authenticator::new(users, &[7; 32], ttl).expect("auth")
    }

    fn basic(credentials: &str, pad: bool) -> String {
        let engine = if pad {
            base64::engine::general_purpose::STANDARD
        } else {
            base64::engine::general_purpose::STANDARD_NO_PAD
        };
        format!("Basic {}", engine.encode(credentials))
    }

    #[test]
    fn login_accepts_padded_and_unpadded_basic_and_refuses_wrong_passwords() {
        let auth = authenticator(TOKEN_TTL_DEFAULT);
        // "ada:correct horse" is 17 bytes: its base64 ends in one '='.
        for pad in [true, false] {
            let token = auth
                .login(Some(basic("ada:correct horse", pad).as_str()))
                .expect("login");
            let principal = auth
                .check(Some(format!("Bearer {token}").as_str()))
                .expect("token");
            assert_eq!(principal.name, "ada");
            assert!(!principal.superuser);
        }
        for wrong in ["ada:wrong", "bob:correct horse", "ada:", ":correct horse"] {
            let err = auth
                .login(Some(basic(wrong, true).as_str()))
                .expect_err(wrong);
            assert_eq!(err.code(), tonic::Code::Unauthenticated);
            assert_eq!(err.message(), "wrong user name or password");
        }
        for malformed in [
            None,
            Some("Bearer x"),
            Some("Basic %%%"),
            Some("Basic YWRh"),
        ] {
            let err = auth.login(malformed).expect_err("malformed");
            assert_eq!(err.code(), tonic::Code::Unauthenticated, "{malformed:?}");
        }
    }

    #[test]
    fn names_with_dots_and_at_signs_log_in_with_tokens_of_both_kinds() {
        let mut users = Users::default();
        users.set("svc-etl.prod", "pw").expect("dotted");
        let token = users.set_api_token("ci@corp.example").expect("e-mail name");
        let auth = Authenticator::new(users, &[7; 32], TOKEN_TTL_DEFAULT).expect("auth");
        let login = auth.token("svc-etl.prod", now_ms() + 60_000);
        let p = auth
            .check(Some(format!("Bearer {login}").as_str()))
            .expect("dotted login token");
        assert_eq!(p.name, "svc-etl.prod");
        let p = auth
            .check(Some(format!("Bearer {token}").as_str()))
            .expect("api token");
        assert_eq!(p.name, "ci@corp.example");
    }

    #[test]
    fn forged_altered_and_expired_tokens_are_refused_saying_which() {
        let auth = authenticator(TOKEN_TTL_DEFAULT);
        let token = auth.token("ada", now_ms() + 60_000);
        assert!(auth.check(Some(format!("Bearer {token}").as_str())).is_ok());
        let other = Authenticator::new(Users::default(), &[8; 32], TOKEN_TTL_DEFAULT)
            .expect("other key")
            .token("ada", now_ms() + 60_000);
        let altered = token.replace("lake1.ada.", "lake1.root.");
        for bad in [other.as_str(), altered.as_str(), "lake1.ada", "", "....."] {
            let err = auth
                .check(Some(format!("Bearer {bad}").as_str()))
                .expect_err(bad);
            assert_eq!(err.code(), tonic::Code::Unauthenticated);
            assert!(
                err.message().contains("not issued"),
                "{bad}: {}",
                err.message()
            );
        }
        let expired = auth.token("ada", now_ms() - 1);
        let err = auth
            .check(Some(format!("Bearer {expired}").as_str()))
            .expect_err("expired");
        assert!(err.message().contains("expired"), "{}", err.message());
        let err = auth.check(None).expect_err("none");
        assert!(
            err.message().contains("requires a login"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn users_files_round_trip_and_name_bad_lines() {
        let mut users = Users::default();
        users.set("ada", "pw1").expect("ada");
        users.set("svc-etl.prod", "pw2").expect("svc");
        let text = users.to_text();
        assert!(!text.contains("pw1") && !text.contains("pw2"), "{text}");
        let parsed = Users::parse(&text).expect("parse");
        assert!(parsed.verify("ada", "pw1") && parsed.verify("svc-etl.prod", "pw2"));
        assert!(!parsed.verify("ada", "pw2"));
        let err = Users::parse("# c\nada:plaintext\n").expect_err("plain");
        assert!(err.starts_with("line 2: not a PHC"), "{err}");
        let err = Users::parse("nocolon").expect_err("shape");
        assert!(err.contains("line 1") && err.contains("NAME:HASH"), "{err}");
        let err = Users::parse(&format!("{} root", text.lines().nth(1).expect("line")))
            .expect_err("unknown mark");
        assert!(err.contains("only word allowed there is admin"), "{err}");
        // The superuser mark survives a round trip and is nobody else's.
        let mut users = parsed;
        users.set_admin("ada", true);
        let reparsed = Users::parse(&users.to_text()).expect("parse");
        assert!(reparsed.is_admin("ada") && !reparsed.is_admin("svc-etl.prod"));
        assert!(
            reparsed.verify("ada", "pw1"),
            "the mark is not part of the hash"
        );
        assert!(users.set("a b", "x").is_err());
        assert!(users.set("ok", "").is_err());
    }

    #[test]
    fn api_tokens_authenticate_their_service_until_replaced() {
        let mut users = Users::default();
        users.set("ada", "pw").expect("user");
        let token = users.set_api_token("svc-etl").expect("token");
        assert!(token.starts_with("lakeapi.svc-etl."));
        // The file keeps only the hash, and reads back.
        let text = users.to_text();
        assert!(text.contains("svc-etl:sha256:") && !text.contains(&token));
        let users = Users::parse(&text).expect("parses");
        let auth = Authenticator::new(users.clone(), &[1; 32], Duration::from_secs(60))
            .expect("authenticator");
        let principal = auth
            .check(Some(&format!("Bearer {token}")))
            .expect("an API token is a bearer token");
        assert_eq!(principal.name, "svc-etl");
        // Basic login with the token as the password, for clients that only have those.
        assert!(users.verify("svc-etl", &token));
        assert!(!users.verify("svc-etl", "pw"));
        for bad in [
            token.replace("svc-etl", "ada"),
            format!("{token}x"),
            "lakeapi.svc-etl.AAAA".to_string(),
            "lakeapi.nobody.AAAA".to_string(),
        ] {
            let err = auth.check(Some(&format!("Bearer {bad}"))).expect_err(&bad);
            assert!(
                err.message().contains("invalid API token"),
                "{}",
                err.message()
            );
        }
        let mut replaced = users;
        let new = replaced.set_api_token("svc-etl").expect("new token");
        assert_ne!(new, token);
        assert_eq!(replaced.api_token_owner(&token), None);
        assert!(Users::parse("svc:sha256:xyz\n").is_err());
    }
}

/// The `authorization` header and the token are client text: whatever a client sends gets
/// a principal or `UNAUTHENTICATED`, never a panic, and only tokens this deployment signed
/// pass.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    fn authenticator() -> Authenticator {
        let mut users = Users::default();
        users.set("ada", "pw").expect("user");
        Authenticator::new(users, &[5; 32], Duration::from_secs(60)).expect("authenticator")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn any_header_is_refused_or_read_without_panicking(header in proptest::option::of(".{0,300}")) {
            let auth = authenticator();
            let _ = basic_credentials(header.as_deref());
            prop_assert!(auth.check(header.as_deref()).is_err());
        }

        #[test]
        fn basic_credentials_read_back_padded_or_not(name in "[a-zA-Z0-9_.-]{1,20}", password in "[^\r\n]{0,40}") {
            use base64::Engine as _;
            let text = format!("{name}:{password}");
            for engine in [&base64::engine::general_purpose::STANDARD, &base64::engine::general_purpose::STANDARD_NO_PAD] {
                let header = format!("Basic {}", engine.encode(&text));
                let (n, p) = basic_credentials(Some(&header)).expect("reads");
                prop_assert_eq!((n.as_str(), p.as_str()), (name.as_str(), password.as_str()));
            }
        }

        #[test]
        fn a_token_with_any_character_changed_is_refused(at in any::<prop::sample::Index>(), c in "[a-zA-Z0-9._-]") {
            let auth = authenticator();
            let token = auth.token("ada", u64::MAX / 2);
            let header = format!("Bearer {token}");
            prop_assert!(auth.check(Some(&header)).is_ok());
            let mut chars: Vec<char> = token.chars().collect();
            let i = at.index(chars.len());
            let replacement = c.chars().next().expect("one char");
            prop_assume!(chars[i] != replacement);
            chars[i] = replacement;
            let altered: String = chars.into_iter().collect();
            let header = format!("Bearer {altered}");
            prop_assert!(auth.check(Some(&header)).is_err());
        }
    }
}
