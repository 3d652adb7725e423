package lib.flipflop.model_versions_test

import data.lib.flipflop.fixtures as f
import data.lib.flipflop.model
import data.lib.flipflop.model_test as mt

# desiredCommitFromStep is a pin on the Kargo versions that have it (v0.9 to
# v1.2); from v1.3 on, Kargo's schema rejects it and every promotion fails at
# the step: the Stage pins nothing, and unsupported-field says why.
v1_2 := {"kargo_version": "v1.2.4"}

test_desired_commit_from_step_pins if {
	entry := {"name": "dev", "sources": [{"repoURL": f.repo, "desiredCommitFromStep": "commit"}]}
	mt.legacy_rows == [["github.com/acme/deploy@main", "${{ outputs.commit.commit }}", "own", true, true]] with input as mt.entry_estate(entry)
		with data.lib.flipflop.config.settings as v1_2
	mt.legacy_rows == [["github.com/acme/deploy@main", "${{ outputs.commit.commit }}", "own", true, true]] with input as mt.entry_estate(entry)
		with data.lib.flipflop.config.settings as {"kargo_version": "0.9.0"}
}

test_desired_commit_from_step_fails_from_v1_3 if {
	entry := {"name": "dev", "sources": [{"repoURL": f.repo, "desiredCommitFromStep": "commit"}]}
	mt.legacy_rows == [] with input as mt.entry_estate(entry)
	mt.legacy_rows == [] with input as mt.entry_estate(entry) with data.lib.flipflop.config.settings as {"kargo_version": "v1.3.0"}
	model.failing == {"acme/dev": ["unsupported-field"]} with input as mt.entry_estate(entry)
	[x.path | some x in model.unsupported] == ["/spec/promotionTemplate/spec/steps/2/config/apps/0/sources/0/desiredCommitFromStep"] with input as mt.entry_estate(entry)
	model.failing == {} with input as mt.entry_estate(entry) with data.lib.flipflop.config.settings as v1_2
}

test_fields_a_version_lacks if {
	selected := {"selector": {"matchLabels": {"app": "dev"}}, "sources": [{"repoURL": f.repo, "desiredRevision": "abc"}]}
	fields == [] with input as mt.entry_estate(selected) with data.lib.flipflop.config.settings as {"kargo_version": "v1.11"}
	fields == ["selector"] with input as mt.entry_estate(selected) with data.lib.flipflop.config.settings as {"kargo_version": "v1.8.3"}
	fields == ["desiredRevision", "selector"] with input as mt.entry_estate(selected) with data.lib.flipflop.config.settings as {"kargo_version": "v1.0.0"}
	origins := {"name": "dev", "fromOrigin": {"kind": "Warehouse", "name": "w"}, "sources": [{"repoURL": f.repo, "fromOrigin": {}}]}
	fields == [] with input as mt.entry_estate(origins) with data.lib.flipflop.config.settings as {"kargo_version": "v1.2"}
	fields == ["fromOrigin", "fromOrigin"] with input as mt.entry_estate(origins) with data.lib.flipflop.config.settings as {"kargo_version": "v1.3"}
}

fields := sort([x.field.field | some x in model.unsupported])

test_desired_commit_from_step_with_update_target_revision_is_no_pin if {
	entry := {"name": "dev", "sources": [{"repoURL": f.repo, "desiredCommitFromStep": "commit", "updateTargetRevision": true}]}
	mt.legacy_rows == [] with input as mt.entry_estate(entry) with data.lib.flipflop.config.settings as v1_2
	mt.legacy_rows == [] with input as mt.entry_estate({"name": "dev", "sources": [{"repoURL": f.repo, "desiredCommitFromStep": ""}]})
		with data.lib.flipflop.config.settings as v1_2
}
