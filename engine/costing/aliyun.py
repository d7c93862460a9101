"""A small client interface over Alibaba Cloud's ECS API (alibabacloud-ecs20140526), for `catalog refresh`.

Every method returns the response *body* as a dict in the API's documented JSON shape (CamelCase keys, e.g.
{"PriceInfo": {"Price": {"TradePrice": 9.53, "Currency": "CNY"}}}), so tests inject recorded responses and the
refresh never touches SDK objects. The SDK is an optional extra, imported lazily: `pip install gpu-advisor[aliyun]`.
"""

from __future__ import annotations

from typing import Any, Protocol

INSTALL_HINT = ("catalog refresh needs Alibaba Cloud's Python SDK: pip install 'gpu-advisor[aliyun]' "
                "(alibabacloud-ecs20140526, alibabacloud-credentials)")


class EcsApi(Protocol):
    def describe_available_resource(self, region: str) -> dict[str, Any]: ...

    def describe_instance_types(self, region: str, next_token: str | None) -> dict[str, Any]: ...

    def describe_price(self, region: str, instance_type: str) -> dict[str, Any]: ...

    def describe_spot_price_history(self, region: str, instance_type: str, start: str, end: str,
                                    offset: int) -> dict[str, Any]: ...


class SdkMissing(RuntimeError):
    pass


class SdkEcsApi:
    """The real client: credentials from the standard chain (env vars, ~/.alibabacloud/credentials, RAM role...)."""

    def __init__(self, region: str) -> None:
        try:
            from alibabacloud_credentials.client import Client as CredentialClient
            from alibabacloud_ecs20140526 import models
            from alibabacloud_ecs20140526.client import Client
            from alibabacloud_tea_openapi.models import Config
        except ImportError as exc:  # optional extra not installed
            raise SdkMissing(INSTALL_HINT) from exc
        self._models = models
        config = Config(credential=CredentialClient(), region_id=region, endpoint=f"ecs.{region}.aliyuncs.com")
        self._client = Client(config)

    @staticmethod
    def _body(response: Any) -> dict[str, Any]:
        return response.body.to_map()

    def describe_available_resource(self, region: str) -> dict[str, Any]:
        req = self._models.DescribeAvailableResourceRequest(
            region_id=region, destination_resource="InstanceType", instance_charge_type="PostPaid")
        return self._body(self._client.describe_available_resource(req))

    def describe_instance_types(self, region: str, next_token: str | None) -> dict[str, Any]:
        req = self._models.DescribeInstanceTypesRequest(max_results=1000, next_token=next_token)
        return self._body(self._client.describe_instance_types(req))

    def describe_price(self, region: str, instance_type: str) -> dict[str, Any]:
        req = self._models.DescribePriceRequest(region_id=region, resource_type="instance",
                                                instance_type=instance_type, price_unit="Hour")
        return self._body(self._client.describe_price(req))

    def describe_spot_price_history(self, region: str, instance_type: str, start: str, end: str,
                                    offset: int) -> dict[str, Any]:
        req = self._models.DescribeSpotPriceHistoryRequest(
            region_id=region, instance_type=instance_type, network_type="vpc", os_type="linux",
            start_time=start, end_time=end, offset=offset)
        return self._body(self._client.describe_spot_price_history(req))
