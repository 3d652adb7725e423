package lib.flipflop.rules.invalid_object_test

import data.lib.flipflop.rules.invalid_object as rule

# tables.rego is what the rules build from the field tables: regenerate it
# (go run ./hack/genfirstpass) after changing fields.rego or the first pass.
test_tables_are_generated_from_the_fields if {
	rule.fast == rule.fast_from_fields
	rule.fast_config == rule.fast_config_from_fields
}
