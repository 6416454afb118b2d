;; Notary anchoring contract (issue 4): records 32-byte roots (a document SHA-256 or a Merkle root of a batch).
;; Clarity 3 (epoch 3.x): `stacks-block-height` is the Stacks block of the anchoring transaction.
;;
;; Public:    (anchor (root (buff 32))) -> (ok { root, height, new })  |  (err u100) when root is not 32 bytes.
;;            Idempotent: anchoring a root again keeps the first record (`new` is false), so two batches with
;;            the same root (the same document uploaded twice) never fail.
;; Read-only: (get-anchor (root (buff 32))) -> (optional { height, sender }): the first record of `root`.
;; Events:    print { event: "anchor", root, height, sender, new }

;; The buffer is not exactly 32 bytes ((buff 32) admits 0..32 bytes; a 33-byte buffer fails type-checking).
(define-constant ERR-BAD-LENGTH (err u100))

(define-map anchors
  (buff 32)
  { height: uint, sender: principal })

(define-public (anchor (root (buff 32)))
  (begin
    (asserts! (is-eq (len root) u32) ERR-BAD-LENGTH)
    (let ((new (map-insert anchors root { height: stacks-block-height, sender: tx-sender })))
      (print { event: "anchor", root: root, height: stacks-block-height, sender: tx-sender, new: new })
      (ok { root: root, height: stacks-block-height, new: new }))))

(define-read-only (get-anchor (root (buff 32)))
  (map-get? anchors root))
