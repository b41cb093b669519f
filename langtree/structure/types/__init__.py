"""Field types: reading annotations, which values fit which types, and conversion.

How annotations are read (`annotations`), what a field holds (`value_types`,
`defaults`), which mappings are compatible under the type settings
(`compatibility`, `type_config`) and the conversions a run makes (`conversion`).
"""
