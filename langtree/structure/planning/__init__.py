"""The execution plan: what is known, what each step needs, and in which order.

Known and generated fields (`known`), what a step reads (`needs`), the steps of
each node (`steps`), the plan and its dependencies (`plan`) and the order that
respects them (`ordering`).
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
