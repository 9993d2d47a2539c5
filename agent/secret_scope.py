"""The import path the plugin guide uses for secrets: ``from agent.secret_scope import get_secret``.

Same functions as :mod:`agent.secrets` and :mod:`agent.context` (one implementation): a secret is
read from the ``.env`` of the profile bound in the current context and fails closed
(:class:`SecretScopeError`) where no profile is bound — a bare thread, a library's own pool. Start
threads with :func:`agent.memory_provider.spawn_context_thread` so the scope travels with them.
"""

from __future__ import annotations

from agent.context import secret_scope, use_home, use_secret_scope
from agent.secrets import SecretScopeError, get_secret, write_secret

__all__ = ["SecretScopeError", "get_secret", "secret_scope", "use_home", "use_secret_scope",
           "write_secret"]
