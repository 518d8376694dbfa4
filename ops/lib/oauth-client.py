#!/usr/bin/env python3
"""An independent OAuth 2.0 client (Authlib) against the service: the tests run it to show that a
third party's client gets and uses an access token as RFC 6749 §4.4 says, and checks the token offline
with the published keys (RFC 7517) as another service would.

Usage: oauth-client.py BASE_URL CLIENT_ID CLIENT_SECRET [SCOPE]
CLIENT_SECRET may be `ed25519:<the private key's 32 bytes, base64url>`: the client then authenticates
with a signed assertion (private_key_jwt, RFC 7523) that Authlib makes and signs (EdDSA).
Prints one JSON object: what the token endpoint answered, the API's status with the token, and the
claims as verified against /.well-known/jwks.json; with a wrong secret, the OAuth error Authlib raised.
"""
import json
import sys

if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] in ("--help", "-h"):
    print(__doc__.strip())
    sys.exit(0)

from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, JsonWebToken
from authlib.oauth2.rfc7523 import PrivateKeyJWT
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
import base64
import requests


def private_key_pem(raw):
    """The Ed25519 private key whose 32 bytes `raw` holds (base64url), as PKCS#8 PEM."""
    key = Ed25519PrivateKey.from_private_bytes(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def main():
    if len(sys.argv) < 4 or sys.argv[1] in ("--help", "-h"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("--help", "-h") else 2)
    base, client_id, secret = sys.argv[1:4]
    scope = sys.argv[4] if len(sys.argv) > 4 else None
    metadata = requests.get(base + "/.well-known/oauth-authorization-server", timeout=10).json()
    endpoint = metadata["token_endpoint"].replace(metadata["issuer"], base)
    if secret.startswith("ed25519:"):
        session = OAuth2Session(client_id, private_key_pem(secret[len("ed25519:"):]), scope=scope,
                                token_endpoint_auth_method="private_key_jwt")
        # The assertion's audience is the token endpoint as the server names it (its issuer's URL).
        session.register_client_auth_method(PrivateKeyJWT(metadata["token_endpoint"], alg="EdDSA"))
    else:
        session = OAuth2Session(client_id, secret, scope=scope, token_endpoint_auth_method="client_secret_basic")
    try:
        token = session.fetch_token(endpoint, grant_type="client_credentials")
    except OAuthError as refusal:
        print(json.dumps({"error": refusal.error}))
        return
    orders = session.get(base + "/v1/orders", timeout=10)
    keys = JsonWebKey.import_key_set(requests.get(base + "/.well-known/jwks.json", timeout=10).json())
    claims = JsonWebToken(["EdDSA"]).decode(
        token["access_token"], keys,
        claims_options={"iss": {"essential": True, "value": metadata["issuer"]},
                        "aud": {"essential": True, "value": metadata["issuer"] + "/v1"}})
    claims.validate()
    print(json.dumps({"token_type": token["token_type"], "scope": token.get("scope"), "expires_in": token["expires_in"],
                      "orders_status": orders.status_code, "claims": dict(claims)}))


if __name__ == "__main__":
    main()
