"""apiextensions.k8s.io: CustomResourceDefinitions (``definitions``) and the custom resources they define
(``custom_resources``, served at ``/apis/<group>/<version>/...`` while their CRD exists: ``served``), with their
printer columns (``columns``) and OpenAPI (``openapi``). The schema rules themselves are core logic:
``dralloc.validation.crd``, ``dralloc.validation.structural``, ``dralloc.validation.openapi_schema``."""
