package lib.flipflop.repo_test

import data.lib.flipflop.repo

test_spellings_are_one_repository if {
	spellings := [
		"https://github.com/Acme/Deploy.git",
		"https://github.com/acme/deploy",
		"https://github.com/acme/deploy/",
		"https://github.com/acme/deploy.git/",
		"http://github.com/acme/deploy",
		"git@github.com:acme/deploy.git",
		"ssh://git@github.com/acme/deploy",
		"ssh://git@github.com:22/acme/deploy.git",
		"https://user:s3cret@github.com/acme/deploy.git",
		" https://github.com/acme/deploy\n",
	]
	ids := {repo.id(s) | some s in spellings}
	ids == {"github.com/acme/deploy"}
}

test_different_repositories_stay_apart if {
	repo.id("https://github.com/acme/deploy") != repo.id("https://github.com/acme/deploy-2")
	repo.id("https://github.com/acme/deploy") != repo.id("https://gitlab.com/acme/deploy")
	repo.id("git@github.com:acme/deploy") != repo.id("git@github.com:other/deploy")
}

test_helm_and_oci_repositories if {
	repo.id("https://charts.example.com/stable") == "charts.example.com/stable"
	repo.id("oci://ghcr.io/acme/charts") == "ghcr.io/acme/charts"
	repo.id("ghcr.io/acme/charts") == "ghcr.io/acme/charts"
}
