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

# kargo_key is Kargo's urls.NormalizeGit: argocd-update matches sources on it.
test_kargo_key_is_kargos_normal_form if {
	repo.kargo_key("https://GitHub.com/Acme/Deploy.git/") == "https://github.com/acme/deploy"
	repo.kargo_key(" https://user:token@github.com/acme/deploy") == "https://github.com/acme/deploy"
	repo.kargo_key("ssh://git@github.com/acme/deploy.git") == "ssh://git@github.com/acme/deploy"
	repo.kargo_key("git@github.com:acme/deploy.git") == "ssh://git@github.com/acme/deploy"
	repo.kargo_key("git@github.com") == "ssh://git@github.com"
	repo.kargo_key("https://github.com") == "https://github.com"
	repo.kargo_key("not a url") == "not a url"
}

test_kargo_key_keeps_scheme_and_port if {
	# https and ssh are different sources to Kargo (akuity/kargo#6237)
	repo.kargo_key("https://github.com/acme/deploy") != repo.kargo_key("git@github.com:acme/deploy")
	repo.kargo_key("https://git.example:8443/acme/deploy") == "https://git.example:8443/acme/deploy"
}
