package lib.flipflop.validation_test

import data.lib.flipflop.validation

# A schema as lib.flipflop.schemas holds one: a $ref to a shared definition.
entry := {"patterns": [], "refs": ["d0"], "schema": `{"type": "object", "properties": {"name": {"$ref": "#/definitions/d0"}}, "required": ["name"]}`}

defs := {"d0": `{"type": "string"}`}

docs := [{"name": 1}, {"name": "ok"}, {}, {"name": "ok"}, {"name": true}]

# Each problem names its document's index in docs, the same whatever the
# chunk the validator is given the documents in.
test_problems_keep_their_index_across_chunks if {
	want := [
		[0, {"path": ["name"], "problem": "type", "want": "string", "got": "number"}],
		[2, {"path": ["name"], "problem": "missing", "want": "present", "got": "missing"}],
		[4, {"path": ["name"], "problem": "type", "want": "string", "got": "boolean"}],
	]
	validation.problems(docs, entry, defs) == want
	validation.problems(docs, entry, defs) == want with validation.chunk as 2
	validation.problems(docs, entry, defs) == want with validation.chunk as 1
}

# Only the definitions an entry names go into its schema.
test_bulk_takes_the_named_definitions if {
	s := json.unmarshal(validation.bulk(entry, {"d0": `{"type": "string"}`, "d1": `{"type": "number"}`}))
	s.definitions == {"d0": {"type": "string"}}
	s.properties.o.items == json.unmarshal(entry.schema)
}
