"""The secret scanner: what looks secret in a name, in text or in bytes, by the default rules.

Modules: :mod:`.names` (header, query parameter and JSON field names that hold a credential, by
their words), :mod:`.shapes` (strings shaped like keys: the gitleaks catalogue shipped here and
ssemock's own forms), :mod:`.fields` (values under credential names inside a body), :mod:`.scrub`
(the default rules applied: :func:`~.scrub.scrub_text`).

It imports nothing of ssemock but the providers' key shapes, so that both the error messages
(:func:`ssemock.errors.redacted`) and the recorder's filter (:mod:`ssemock.redact`, which adds the
user's rules and the credentials a request sent) stand on it. Nothing is imported here: the
replay server reads the names rule only, without the key-shape scanner.
"""
