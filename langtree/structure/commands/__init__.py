"""What each DSL command does to the tree and to a node's settings.

Node settings and modifiers (`settings`), assembly variables (`variables`),
``@context`` (`context`), transforms (`transforms`), assets (`assets`),
``{name}`` placeholders (`placeholders`), pluck paths (`plucks`), ``@each`` and
``@all`` flows (`flows`, `element_flows`), where their values show
(`deliveries`) and what each command reads and writes (`command_keys`).
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
