package lib.flipflop.config_test

import data.lib.flipflop.config

test_parse_version if {
	config.parse_version("v1.9") == [1, 9, 0]
	config.parse_version("1.10.3") == [1, 10, 3]
	config.parse_version("v1.10.0-rc.1") == [1, 10, 0]
	config.parse_version("v0.8.4+build.7") == [0, 8, 4]
	not config.parse_version("latest")
	not config.parse_version("v1")
	not config.parse_version("v1.9.3.1")
	not config.parse_version(" v1.9")
}

test_kargo_default_is_the_newest_modelled if {
	config.kargo == config.parse_version(config.newest_kargo)
	not config.kargo_explicit
	config.kargo_report == {"version": config.newest_kargo, "named": false, "newer": false}
}

test_kargo_named if {
	config.kargo == [1, 2, 0] with config.settings as {"kargo_version": "v1.2"}
	config.kargo_report == {"version": "v1.2.0", "named": true, "newer": false} with config.settings as {"kargo_version": "1.2"}
	config.kargo_at_least([1, 3]) with config.settings as {"kargo_version": "v1.3.0"}
	not config.kargo_at_least([1, 3]) with config.settings as {"kargo_version": "v1.2.9"}
}

# A newer release than the model follows is read as the newest it models.
test_kargo_newer_than_modelled if {
	config.kargo == config.parse_version(config.newest_kargo) with config.settings as {"kargo_version": "v9.0.0"}
	config.kargo_report == {"version": config.newest_kargo, "named": true, "newer": true} with config.settings as {"kargo_version": "v9.0.0"}
}

# What is no version is no setting: the hosts reject it before it gets here.
test_kargo_not_a_version if {
	config.kargo_report == {"version": config.newest_kargo, "named": false, "newer": false} with config.settings as {"kargo_version": "latest"}
	config.kargo_report == {"version": config.newest_kargo, "named": false, "newer": false} with config.settings as {"kargo_version": 1.9}
}
