"""kube-apiserver's ValidatingAdmissionPolicy admission plugin (k8s.io/apiserver/pkg/admission/plugin/policy/
validating): every create and update is matched against the stored policies and their bindings
(:mod:`.matching`), and the validations of each matching binding's policy are evaluated with its params
(:mod:`.policies`): a failed validation denies the write with upstream's error, or adds a Warning to its answer,
as the binding's validationActions say."""
