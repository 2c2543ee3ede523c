"""A Django app for the test suite's Nautobot only (scripts/peers/nautobot.sh): lets its webhooks
reach `netgw serve` on 127.0.0.1.

Nautobot 2.4's SSRF guard (nautobot/extras/webhooks.py) refuses every loopback webhook target, at
save time and again in the worker before sending, and no setting lifts it. The suite's only network is
127.0.0.0/8, so this app narrows that one check to "not loopback" when Django starts: every other
blocked range (link-local, multicast, reserved, the configured extra networks) stays refused, and the
request, its body and its X-Hook-Signature are Nautobot's own. A real deployment points the webhook
at serve's routable address and needs none of this.
"""

from django.apps import AppConfig


class LoopbackWebhooks(AppConfig):
    name = "nautobot_loopback_webhooks"
    label = "netgw_loopback_webhooks"

    def ready(self):
        from nautobot.extras import webhooks

        blocked = webhooks._webhook_addr_is_builtin_blocked

        def blocked_but_loopback(addr):
            return not addr.is_loopback() and blocked(addr)

        webhooks._webhook_addr_is_builtin_blocked = blocked_but_loopback
