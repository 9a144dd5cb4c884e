(defun begin
  (and (setq read_count 0)
       (setq write_count 0)))

(defun main
  (or (and (eq (RECORD_TYPE) IO)
           (or (and (eq (IO_FUNCTION) 0x00)
                    (setq read_count (add read_count 1)))
               (setq write_count (add write_count 1))))))

(defun end
  (and (echo read_count)
       (echo write_count)
       (nl)))
