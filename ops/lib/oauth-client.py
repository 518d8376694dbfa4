#!/usr/bin/env python3
"""An independent OAuth 2.0 client (Authlib) against the service: the tests run it to show that a
third party's client gets and uses an access token as RFC 6749 §4.4 says, and checks the token offline
with the published keys (RFC 7517) as another service would.

Usage: oauth-client.py BASE_URL CLIENT_ID CLIENT_SECRET [SCOPE]
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
import requests


def main():
    if len(sys.argv) < 4 or sys.argv[1] in ("--help", "-h"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("--help", "-h") else 2)
    base, client_id, secret = sys.argv[1:4]
    scope = sys.argv[4] if len(sys.argv) > 4 else None
    metadata = requests.get(base + "/.well-known/oauth-authorization-server", timeout=10).json()
    session = OAuth2Session(client_id, secret, scope=scope, token_endpoint_auth_method="client_secret_basic")
    try:
        token = session.fetch_token(metadata["token_endpoint"].replace(metadata["issuer"], base),
                                    grant_type="client_credentials")
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
