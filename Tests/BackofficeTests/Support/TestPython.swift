import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// The Python the tests run third parties' tools with: `.build/test-venv`, a virtual environment
/// holding aiosmtpd (the SMTP server of `MailSink`), jsonschema with PyYAML (the contract's
/// validator, `ops/lib/validate-export.py`), stripe (its webhook verifier, `WebhookReceiver`) and
/// Authlib with requests (an independent OAuth client, `ops/lib/oauth-client.py`),
/// pinned, made by the first test that needs it (under a file lock, so two test processes make it
/// once), so that `swift test` on a fresh clone needs nothing run before it.
enum TestPython {
    static let packages = [
        "aiosmtpd==1.4.6", "jsonschema==4.26.0", "rfc3339-validator==0.1.4", "PyYAML==6.0.3", "stripe==16.1.0",
        "Authlib==1.3.2", "requests==2.32.3",
    ]

    /// The interpreter's path, or why the environment could not be made.
    static let path: Result<String, TestSetupError> = {
        let venv = projectRoot.appendingPathComponent(".build/test-venv").path
        let script = """
            set -e
            venv="$1"
            shift
            exec 9>"$venv.lock"
            flock 9
            modules='aiosmtpd, jsonschema, rfc3339_validator, yaml, stripe, authlib, requests'
            if ! "$venv/bin/python" -c "import $modules" >/dev/null 2>&1; then
              rm -rf "$venv"
              python3 -m venv "$venv"
              "$venv/bin/pip" install -q --disable-pip-version-check "$@"
            fi
            """
        do {
            let made = try ChildProcess.run(["/bin/sh", "-c", script, "test-venv", venv] + packages)
            guard made.status == 0 else {
                return .failure(TestSetupError(description: "making \(venv) (python3 -m venv, pip): \(made.output)"))
            }
            return .success("\(venv)/bin/python")
        } catch {
            return .failure(TestSetupError(description: "making \(venv): \(error)"))
        }
    }()
}
