//! Chef's core resources that are not network resources, and Chef's common resource properties.

use super::{Eval, ResourceDecl, type_name};
use crate::cookbook::CookbookError;
use lib_ruby_parser::Node;
use serde_json::Value;

/// Chef 19's core resources (chef/chef `lib/chef/resource/*.rb`, commit 688d3ad3, Chef 19.4.14)
/// other than `link`, which is netgw's network link unless it names a file ([`is_host_link`]).
const HOST_RESOURCES: [&str; 165] = [
    "alternatives",
    "apt_package",
    "apt_preference",
    "apt_repository",
    "apt_update",
    "archive_file",
    "bash",
    "batch",
    "bff_package",
    "breakpoint",
    "build_essential",
    "cab_package",
    "chef_client_config",
    "chef_client_cron",
    "chef_client_hab_ca_cert",
    "chef_client_launchd",
    "chef_client_scheduled_task",
    "chef_client_systemd_timer",
    "chef_client_trusted_certificate",
    "chef_gem",
    "chef_handler",
    "chef_sleep",
    "chef_vault_secret",
    "chocolatey_config",
    "chocolatey_feature",
    "chocolatey_installer",
    "chocolatey_package",
    "chocolatey_source",
    "cookbook_file",
    "cron_access",
    "csh",
    "directory",
    "dmg_package",
    "dnf_package",
    "dpkg_package",
    "dsc_resource",
    "dsc_script",
    "execute",
    "file",
    "freebsd_package",
    "gem_package",
    "group",
    "habitat_config",
    "habitat_install",
    "habitat_service",
    "habitat_user_toml",
    "homebrew_cask",
    "homebrew_package",
    "homebrew_tap",
    "homebrew_update",
    "hostname",
    "http_request",
    "ifconfig",
    "inspec_input",
    "inspec_waiver",
    "inspec_waiver_file_entry",
    "ips_package",
    "kernel_module",
    "ksh",
    "launchd",
    "locale",
    "log",
    "macos_pkg",
    "macos_userdefaults",
    "macosx_service",
    "macports_package",
    "mdadm",
    "mount",
    "msu_package",
    "notify_group",
    "ohai",
    "ohai_hint",
    "openbsd_package",
    "openssl_dhparam",
    "openssl_ec_private_key",
    "openssl_ec_public_key",
    "openssl_rsa_private_key",
    "openssl_rsa_public_key",
    "openssl_x509_certificate",
    "openssl_x509_crl",
    "openssl_x509_request",
    "package",
    "pacman_package",
    "paludis_package",
    "perl",
    "plist",
    "portage_package",
    "powershell_package",
    "powershell_package_source",
    "powershell_script",
    "python",
    "reboot",
    "registry_key",
    "remote_directory",
    "remote_file",
    "rhsm_errata",
    "rhsm_errata_level",
    "rhsm_register",
    "rhsm_repo",
    "rhsm_subscription",
    "route",
    "rpm_package",
    "ruby",
    "ruby_block",
    "script",
    "selinux_boolean",
    "selinux_fcontext",
    "selinux_install",
    "selinux_login",
    "selinux_module",
    "selinux_permissive",
    "selinux_port",
    "selinux_state",
    "selinux_user",
    "service",
    "smartos_package",
    "snap_package",
    "solaris_package",
    "ssh_known_hosts_entry",
    "sudo",
    "swap_file",
    "sysctl",
    "systemd_unit",
    "template",
    "timezone",
    "user",
    "user_ulimit",
    "whyrun_safe_ruby_block",
    "windows_ad_join",
    "windows_audit_policy",
    "windows_auto_run",
    "windows_certificate",
    "windows_defender",
    "windows_defender_exclusion",
    "windows_dfs_folder",
    "windows_dfs_namespace",
    "windows_dfs_server",
    "windows_dns_record",
    "windows_dns_zone",
    "windows_env",
    "windows_feature",
    "windows_feature_dism",
    "windows_feature_powershell",
    "windows_firewall_profile",
    "windows_firewall_rule",
    "windows_font",
    "windows_package",
    "windows_pagefile",
    "windows_path",
    "windows_printer",
    "windows_printer_port",
    "windows_script",
    "windows_security_policy",
    "windows_service",
    "windows_share",
    "windows_shortcut",
    "windows_task",
    "windows_uac",
    "windows_update_settings",
    "windows_user_privilege",
    "windows_workgroup",
    "yum_package",
    "yum_repository",
    "zypper_package",
    "zypper_repository",
];

/// Chef's `link` resource's own properties (`lib/chef/resource/link.rb`), none of which netgw's
/// network `link` has.
const FILE_LINK_PROPERTIES: [&str; 5] = ["to", "target_file", "link_type", "owner", "group"];

/// Chef's common properties of every resource (`lib/chef/resource.rb`) that change how chef-client
/// runs a resource, not what the resource is: accepted with Chef's types and ignored with a note.
const COMMON_PROPERTIES: [&str; 6] = [
    "provider",
    "retries",
    "retry_delay",
    "sensitive",
    "ignore_failure",
    "compile_time",
];

pub(super) fn is_host_resource(name: &str) -> bool {
    HOST_RESOURCES.contains(&name)
}

/// Chef's file symlink, not netgw's network link: its name is a path, or it sets a property only
/// Chef's `link` has.
fn is_host_link(d: &ResourceDecl) -> bool {
    d.kind == "link"
        && (d.name.starts_with('/')
            || d.properties
                .iter()
                .any(|(k, _)| FILE_LINK_PROPERTIES.contains(&k.as_str())))
}

/// The type Chef's common property takes (`None`: not a common property).
fn common_type_ok(name: &str, v: &Value) -> Option<bool> {
    COMMON_PROPERTIES.contains(&name).then(|| match name {
        "provider" => v.is_string() || super::value::as_sym(v).is_some(),
        "retries" | "retry_delay" => v.is_i64() || v.is_u64(),
        "ignore_failure" => {
            v.is_boolean() || super::value::as_sym(v) == Some("quiet") || v == "quiet"
        }
        _ => v.is_boolean(),
    })
}

impl Eval<'_> {
    pub(super) fn host_resource(&self, n: &Node, name: &str) -> CookbookError {
        self.err(
            n.expression(),
            format!("resource `{name}`"),
            "a host resource netgw does not manage: netgw converges network devices, not the host chef-client runs on (run this recipe with chef-client)",
        )
    }

    /// A declared resource that turned out to be Chef's file `link`.
    pub(super) fn refuse_host_link(&self, d: &ResourceDecl) -> Result<(), CookbookError> {
        if is_host_link(d) {
            return Err(d.error(
                format!("resource `link {:?}`", d.name),
                "Chef's `link` (a file symlink: its name is a path or it sets to, target_file, link_type, owner or group) is a host resource netgw does not manage; netgw's `link` is a network interface",
            ));
        }
        Ok(())
    }

    /// A common Chef property on a resource: checked as Chef checks its type, then ignored with a
    /// note (`Ok(true)`); `Ok(false)`: not a common property.
    pub(super) fn common_property(
        &self,
        n: &Node,
        name: &str,
        v: &Value,
    ) -> Result<bool, CookbookError> {
        match common_type_ok(name, v) {
            None => Ok(false),
            Some(false) => Err(self.err(
                n.expression(),
                format!("`{name}` of {}", type_name(v)),
                "not a value Chef accepts for this property (Chef raises ValidationFailed)",
            )),
            Some(true) => {
                let at = self.err(n.expression(), format!("`{name}`"), "");
                tracing::warn!(
                    "{at}accepted as Chef accepts it and ignored: it changes how chef-client runs a resource, and netgw applies resources with its own drivers in one transaction"
                );
                Ok(true)
            }
        }
    }
}
