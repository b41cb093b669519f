"""Field types: reading annotations, which values fit which types, and conversion.

How annotations are read (`annotations`), what a field holds (`value_types`,
`defaults`), which mappings are compatible under the type settings
(`compatibility`, `type_config`) and the conversions a run makes (`conversion`).
"""

# The room's modules serve its own stage, which imports them directly; what other
# stages and users may import, the stage's __init__ exports.
__all__: list[str] = []
