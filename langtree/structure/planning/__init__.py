"""The execution plan: what is known, what each step needs, and in which order.

Known and generated fields (`known`), what a step reads (`needs`), the steps of
each node (`steps`), the plan and its dependencies (`plan`) and the order that
respects them (`ordering`).
"""
