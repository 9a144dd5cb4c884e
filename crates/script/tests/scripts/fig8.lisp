; Figure 8 in the Lisp-like syntax.
(defun begin (setq buf (make_buffer LRU 2048)))
(defun main
  (if (eq (RECORD_TYPE) IO)
      (progn (setq file (IO_FILE))
             (setq page (IO_PAGE))
             (if (eq (IO_FUNCTION) 0x00)
                 (read_buffer buf file page)
                 (if (eq (IO_FUNCTION) 0x01) (write_buffer buf file page))))))
(defun end (print_buffer buf))
